import type { Catalogue } from "../en";
import { account } from "./account";
import { accountSecurity } from "./account-security";
import { ciba } from "./ciba";
import { devices } from "./devices";
import { fedcm } from "./fedcm";
import { hosted } from "./hosted";
import { impersonation } from "./impersonation";
import { lockout } from "./lockout";
import { mailCode } from "./mail-code";
import { mails } from "./mails";
import { pages } from "./pages";
import { passkeys } from "./passkeys";
import { secondStep } from "./second-step";
import { setupLinks } from "./setup-links";
import { vault } from "./vault";

export const de: Catalogue = {
  pages,
  mails,
  mailCode,
  lockout,
  devices,
  account,
  accountSecurity,
  hosted,
  vault,
  impersonation,
  ciba,
  setupLinks,
  passkeys,
  fedcm,
  secondStep,
};
