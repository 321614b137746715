import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";
import { bindBrowser } from "../http/browser-binding";
import { SSO_REQUEST_LIFETIME_MS } from "./requests";
import { connectionForEmail, startSsoSignIn } from "./start";

/**
 * The built-in sign-in page asks for the email first (contract organizations.md §2): when the email's verified domain
 * has a connection, the person goes to that IdP — the same as `POST /sso/start`, with the page's own signed landing
 * as `redirectTo` — and the IdP's URL is answered; otherwise `undefined`, and the page goes on as before.
 * `redirectTo` is asked for only when routing (making it binds this browser to the page's landing).
 */
export async function ssoUrlForSignInPage(
  c: Context<AppEnv>,
  email: string,
  redirectTo: () => Promise<string>,
): Promise<string | undefined> {
  const deps = c.var.deps;
  if (!(await connectionForEmail(deps, email))) return undefined;
  const browserHash = await bindBrowser(c, "sso-flow", SSO_REQUEST_LIFETIME_MS / 1000);
  return startSsoSignIn(deps, { email, redirectTo: await redirectTo() }, browserHash);
}
