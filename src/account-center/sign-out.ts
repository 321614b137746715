import { html } from "hono/html";
import { revokeSession } from "../auth";
import { render } from "../browser/page-response";
import { type BrowserSession, endBrowserSession, readBrowserSession } from "../browser/session";
import type { Catalogue } from "../browser/text";
import { accountCatalogue, accountUrl, apiPath, type Ctx, isOwnPost, otherSitePage, toSignIn } from "./forms";

/**
 * Signing out of the account center: the page's cookie AND its session row (a cookie alone would leave the session's
 * refresh tokens working), as the OAuth2 page's logout does. A cross-site post signs nobody out (a nuisance CSRF).
 */

export async function endPageSession(c: Ctx, session: BrowserSession): Promise<void> {
  endBrowserSession(c);
  await revokeSession(c.var.deps, session.sessionId);
}

const signInHref = (c: Ctx) => `${apiPath(c)}/signin?redirectTo=${encodeURIComponent(accountUrl(c))}`;

/** A page for a browser that is no longer signed in: what happened, and a way to sign in again. */
export function standalonePage(
  c: Ctx,
  catalogue: Catalogue,
  title: string,
  lead: string,
  status: 200 | 400 = 200,
) {
  const body = html`<h1>${title}</h1>
<p class="lead">${lead}</p>
<p><a href="${signInHref(c)}">${catalogue.account.signInAgain}</a></p>`;
  return render(c, status, title, body, { t: catalogue.pages });
}

export const signedOutPage = (c: Ctx, catalogue: Catalogue) =>
  standalonePage(c, catalogue, catalogue.account.signedOutTitle, catalogue.account.signedOutLead);

/** `POST /account/sign-out`: the header's button, and the re-authentication's "use another account". */
export async function signOut(c: Ctx): Promise<Response> {
  const session = await readBrowserSession(c, { ending: true });
  const catalogue = accountCatalogue(c, session?.user.locale);
  if (!isOwnPost(c)) return otherSitePage(c);
  if (session) await endPageSession(c, session);
  else endBrowserSession(c);
  return signedOutPage(c, catalogue);
}

/** `POST /account/reauth/sign-in-again`: an account with no way to confirm here signs in anew, then comes back. */
export async function signInAgain(c: Ctx): Promise<Response> {
  const session = await readBrowserSession(c, { ending: true });
  if (!isOwnPost(c)) return otherSitePage(c);
  if (session) await endPageSession(c, session);
  return toSignIn(c);
}
