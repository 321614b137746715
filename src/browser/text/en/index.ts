import { account } from "./account";
import { accountSecurity } from "./account-security";
import { devices } from "./devices";
import { hosted } from "./hosted";
import { lockout } from "./lockout";
import { mailCode } from "./mail-code";
import { mails } from "./mails";
import { pages } from "./pages";
import { setupLinks } from "./setup-links";

/** Every word the service shows or mails in English: the catalogue every other language follows, key for key. */
export const en = { pages, mails, mailCode, lockout, devices, account, accountSecurity, hosted, setupLinks };

export type Catalogue = typeof en;
