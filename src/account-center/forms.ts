import type { Context } from "hono";
import { html } from "hono/html";
import { render } from "../browser/page-response";
import { catalogueFor } from "../browser/page-text";
import { type BrowserSession, readBrowserSession } from "../browser/session";
import type { Catalogue } from "../browser/text";
import type { AppEnv } from "../http/app-env";
import { bodyText } from "../http/validation";
import { isSameOrigin } from "../pages";

/**
 * Who the account center serves and how its forms arrive. The page's sign-in cookie (the built-in pages' own,
 * src/browser/session.ts: MACed, HttpOnly, SameSite=Lax, checked against its session row) says who is signed
 * in; without it the browser goes to the hosted sign-in and comes back. Every form post passes the same checks first.
 */

export type Ctx = Context<AppEnv>;

/** The API's own path (`AUTH_SERVER_URL`'s), under which every page of the service lives. */
export const apiPath = (c: Ctx) => c.var.config.urls.authPath;

/** The account center's path for `sub`: form actions and links post to whichever origin served the page. */
export const accountPath = (c: Ctx, sub = "") => `${apiPath(c)}/account${sub}`;

/** The page's absolute URL, as the hosted sign-in brings the browser back to it. */
export const accountUrl = (c: Ctx) => c.var.config.urls.auth("/account");

/**
 * The language: the `ui_locales` query parameter (as on the OAuth2 pages), then the user's `locale`, then the
 * browser's languages, among `AUTH_UI_LOCALES`.
 */
export function accountCatalogue(c: Ctx, userLocale?: string | null): Catalogue {
  const uiLocales = (c.req.query("ui_locales") ?? "").split(" ").filter(Boolean).slice(0, 10);
  return catalogueFor(c, uiLocales, userLocale);
}

/** Not signed in: to the hosted sign-in, which brings the browser back here signed in to the pages. */
export function toSignIn(c: Ctx): Response {
  const target = `${apiPath(c)}/signin?redirectTo=${encodeURIComponent(accountUrl(c))}`;
  return c.redirect(new URL(target, c.req.url).toString(), 303);
}

export type Signed = { session: BrowserSession; catalogue: Catalogue };

/** The signed-in browser session for a page view, or the way to the sign-in. */
export async function accountSession(c: Ctx): Promise<{ answer: Response } | Signed> {
  const session = await readBrowserSession(c);
  if (!session) return { answer: toSignIn(c) };
  return { session, catalogue: accountCatalogue(c, session.user.locale) };
}

/**
 * A cross-site form post (CSRF: a page elsewhere making the signed-in browser change its account) is refused. The
 * cookie is SameSite=Lax, which already keeps it off a cross-site POST; on top, as the OAuth2 page does, the post's
 * `Origin` must be this origin, and `Sec-Fetch-Site`, which browsers send with it, must say same-origin (a same-site
 * sibling origin is another site for this page). OWASP CSRF Prevention Cheat Sheet, "Fetch Metadata headers".
 */
export function isOwnPost(c: Ctx): boolean {
  if (!isSameOrigin(c)) return false;
  const site = c.req.header("sec-fetch-site");
  return site === undefined || site === "same-origin";
}

/** The post's fields: a form body, each name once; anything else reads as no fields (the forms say what is missing). */
async function formFields(c: Ctx): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams();
  // The app's body limit (64 KiB) bounds what is read.
  return new URLSearchParams(await bodyText(c));
}

export type Posted = Signed & { params: URLSearchParams };

/**
 * Every form post of the account center starts here: a cross-site post gets a 403 problem page, a browser that is
 * not signed in goes to the sign-in, and the fields are read.
 */
export async function accountPost(c: Ctx): Promise<{ answer: Response } | Posted> {
  if (!isOwnPost(c)) return { answer: await otherSitePage(c) };
  const signed = await accountSession(c);
  if ("answer" in signed) return signed;
  return { ...signed, params: await formFields(c) };
}

/** After a form post: back to the page at `#section`, with a notice said at the top (a key of the notices). */
export function backToAccount(c: Ctx, section: string, notice?: string): Response {
  const query = notice ? `?notice=${encodeURIComponent(notice)}` : "";
  const target = new URL(`${accountPath(c)}${query}#${encodeURIComponent(section)}`, c.req.url);
  return c.redirect(target.toString(), 303);
}

/** The one field of a form, trimmed and bounded (a longer value is cut, then refused by its own rule if need be). */
export const field = (params: URLSearchParams, name: string, max = 256) =>
  (params.get(name) ?? "").trim().slice(0, max);

/** The answer to a cross-site post: a problem page in the browser's language, nothing done. */
export async function otherSitePage(c: Ctx): Promise<Response> {
  const catalogue = accountCatalogue(c);
  const { account } = catalogue;
  const body = html`<h1>${account.otherSiteTitle}</h1>
<p class="lead">${catalogue.pages.errors.otherSite}</p>
<p><a href="${accountPath(c)}">${account.backToAccount}</a></p>`;
  return render(c, 403, account.otherSiteTitle, body, { t: catalogue.pages });
}

/** A form the page refused: shown again, with the reason in its section, and the status. */
export interface Refusal {
  section: string;
  error: string;
  status: 400 | 401 | 403 | 404 | 429;
}

/** What a section's form post ends in: an answer (a redirect, a page), or a refusal the page shows in place. */
export type Outcome = Response | Refusal;

/** What a section renders from: who, in which words, and the reason a form of theirs was refused, if one was. */
export interface SectionView extends Signed {
  error?: string;
}
