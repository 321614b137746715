import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { deleteAccount } from "./delete";
import { changeEmail } from "./email";
import { accountPost, accountSession, type Ctx, type Outcome, type Posted } from "./forms";
import { accountPage, emailLinkLanding } from "./page";
import { changePassword } from "./password";
import { saveProfile } from "./profile";
import { reauthRoutes } from "./reauth-routes";
import { securityRoutes } from "./security";
import { revokeOthers, revokeSession } from "./sessions";
import { signOut } from "./sign-out";

/**
 * `{prefix}/account` (contract §13), mounted from its feature.ts whether or not the OAuth2 provider is on. Pages for
 * people, not API operations (src/openapi/auth-document.ts leaves them out). Every post is a same-origin form of a
 * signed-in browser (forms.ts `accountPost`); a refused one shows the page again with the reason in its section.
 */

/** A section's form post: the checks every post passes, the section's work, then its answer or the page again. */
const action = (handle: (c: Ctx, posted: Posted) => Promise<Outcome>) => async (c: Ctx) => {
  const posted = await accountPost(c);
  if ("answer" in posted) return posted.answer;
  const outcome = await handle(c, posted);
  return outcome instanceof Response ? outcome : accountPage(c, posted, outcome);
};

export const accountCenterRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    // The email change's link comes back here (page.ts): a URL only the service signs.
    if (c.req.query("own_mac") !== undefined) return emailLinkLanding(c);
    const signed = await accountSession(c);
    if ("answer" in signed) return signed.answer;
    return accountPage(c, signed);
  })
  .post("/profile", action(saveProfile))
  .post("/email", action(changeEmail))
  .post("/password", action(changePassword))
  .post("/sessions/revoke", action(revokeSession))
  .post("/sessions/revoke-others", action(revokeOthers))
  .post("/delete", action(deleteAccount))
  .post("/sign-out", signOut)
  .route("/", reauthRoutes)
  .route("/", securityRoutes);
