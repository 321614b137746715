import type { Catalogue } from "../en";
import { account } from "./account";
import { accountSecurity } from "./account-security";
import { devices } from "./devices";
import { hosted } from "./hosted";
import { lockout } from "./lockout";
import { mailCode } from "./mail-code";
import { mails } from "./mails";
import { pages } from "./pages";
import { setupLinks } from "./setup-links";

export const es: Catalogue = {
  pages,
  mails,
  mailCode,
  lockout,
  devices,
  account,
  accountSecurity,
  hosted,
  setupLinks,
};
