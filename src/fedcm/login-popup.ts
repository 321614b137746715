import { Hono } from "hono";
import { html } from "hono/html";
import type { Ctx } from "../browser/page-paths";
import { render } from "../browser/page-response";
import { catalogueFor } from "../browser/page-text";
import { readBrowserSession } from "../browser/session";
import type { Config } from "../config";
import type { AppEnv } from "../http/app-env";

/**
 * The config file's `login_url` (W3C FedCM § The config file, and § Login Status API's sign-in pop-up): when the
 * browser believes a person signed in here but the accounts endpoint names nobody (the session ended, the cookie
 * went), or a relying party's button asks while they are signed out, Chrome opens this URL in a pop-up. The pop-up
 * must end by calling `IdentityProvider.close()`, which tells the browser the sign-in is done: it then asks the
 * accounts endpoint again and carries on with its prompt. Without it the pop-up stays open on whatever page the
 * sign-in ended, and the relying party's request waits until the person closes it by hand.
 *
 * So this page: signed out, it sends the browser to the hosted sign-in (`/signin`, contract §13) with itself as the
 * way back. It lives under the account center's path because the hosted pages' only way back that mints no token is
 * the account center (src/oauth2/app-requests.ts `isAccountCenter`): the sign-in writes the page's cookies and
 * `Set-Login: logged-in`, and no refresh token ever lands in this URL. Signed in, it says so, answers
 * `Set-Login: logged-in` again (the browser may have had it as logged out), and its script closes the pop-up.
 * Opened in an ordinary tab, `IdentityProvider.close()` does nothing (it acts only in the browser's FedCM pop-up) and
 * the page stays, saying who is signed in.
 */

/** Under the auth API, after the account center's own path (see above). */
export const LOGIN_POPUP_PATH = "/account/fedcm-login";

export const loginPopupUrl = (config: Config) => config.urls.auth(LOGIN_POPUP_PATH);

/** The page's script: closes the browser's pop-up where the browser has FedCM; nothing anywhere else. */
export const CLOSE_SCRIPT = `
(() => {
  const provider = window.IdentityProvider;
  if (provider && typeof provider.close === "function") provider.close();
})();`;

async function loginPopup(c: Ctx) {
  const { config } = c.var;
  const session = await readBrowserSession(c);
  if (!session) {
    const signIn = new URL(config.urls.auth("/signin"));
    signIn.searchParams.set("redirectTo", loginPopupUrl(config));
    return c.redirect(signIn.toString(), 303);
  }
  // The login status the FedCM endpoints go by (src/fedcm/answers.ts `signedIn`): an impersonation or an anonymous
  // user is nobody there, so the browser is not told otherwise here.
  if (!session.actor && !session.user.isAnonymous) c.header("Set-Login", "logged-in");
  const catalogue = catalogueFor(c, [], session.user.locale);
  const t = catalogue.pages;
  const words = catalogue.fedcm;
  const who = session.user.email ?? session.user.displayName;
  return render(
    c,
    200,
    words.signedInTitle,
    html`<h1>${words.signedInTitle}</h1>
<p class="who">${t.signedInAs} <strong>${who}</strong></p>
<p>${words.closesItself}</p>`,
    { t, script: CLOSE_SCRIPT },
  );
}

export const loginPopupRoutes = new Hono<AppEnv>().get(LOGIN_POPUP_PATH, loginPopup);
