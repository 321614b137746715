import { absolutePageFor, type Ctx } from "../browser/page-paths";
import { bindBrowser, browserBinding } from "../http/browser-binding";
import { timingSafeEqualString } from "../lib/crypto";
import { isOwnSignedRedirect, LOGIN_PAGE_PATH, signOwnRedirect } from "../lib/redirect";

/**
 * A magic link asked for on the page comes back to the page, and only in the browser that asked for it.
 *
 * Threat (login CSRF): the landing URL turns the session the link created into the page's 30-day cookie. An attacker
 * who sends a victim the landing URL of their own link would sign the victim's browser in as the attacker, and every
 * later OAuth2 sign-in there (silently, with prompt=none) would complete for the attacker's account.
 *
 * So the link's target names the asking browser's binding (`browser`, the hash of its `oauth2-link` cookie) and is
 * signed by the service (`signOwnRedirect`): `/verify` admits it by that signature (the page is on no allow-list, so
 * nobody can aim a link of their own at it through the API), and the landing accepts it only from a browser whose
 * cookie matches. Anywhere else the page shows its form and sets no cookie; the token in the URL is not spent.
 */
const LINK_LIFETIME_S = 60 * 60; // a magic link's own lifetime (tickets.ts passwordlessEmail)

export async function pageLinkTarget(c: Ctx, requestId: string): Promise<string> {
  const browser = await bindBrowser(c, "oauth2-link", LINK_LIFETIME_S);
  const target = new URL(absolutePageFor(c, requestId));
  target.searchParams.set("browser", browser);
  return signOwnRedirect(c.var.config, target.toString());
}

/** Whether this request is the landing of a link this page sent, opened in the browser that asked for it. */
export async function isLandingInAskingBrowser(c: Ctx): Promise<boolean> {
  const held = await browserBinding(c, "oauth2-link");
  const named = c.req.query("browser");
  if (!held || !named || !timingSafeEqualString(named, held)) return false;
  // The page answers under whichever host reached it; the link was signed under AUTH_SERVER_URL.
  const asSigned = c.var.config.urls.auth(`${LOGIN_PAGE_PATH}${new URL(c.req.url).search}`);
  return isOwnSignedRedirect(c.var.config, asSigned);
}
