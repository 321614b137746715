import type { Context } from "hono";
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { render } from "../browser/page-response";
import { catalogueFor } from "../browser/page-text";
import type { Catalogue } from "../browser/text";
import type { SetupLinkRow } from "../db/schema";
import type { AppEnv } from "../http/app-env";

/**
 * The frame of the setup link's pages: the hosted pages' shell (brand, CSP with nonces, no script at all), wider
 * for the values to copy, in the reader's language (`Accept-Language` among `AUTH_UI_LOCALES`).
 */

export type Words = Catalogue["setupLinks"];
type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `
  main { width: min(44rem, 94vw); }
  .values { display: grid; gap: .2rem; margin: .6rem 0 1rem; }
  .values dt { font-weight: 600; margin-top: .5rem; }
  .values dd { margin: 0; }
  code.copy { display: block; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 6px; font: .85rem ui-monospace, monospace; overflow-wrap: anywhere; user-select: all; }
  ol.steps, ul.items { padding-left: 1.2rem; line-height: 1.6; }
  ul.items li { margin: .5rem 0; }
  .status { font-size: .9rem; }
  .ok { padding: .6rem .8rem; border-radius: 6px; background: #2a8a3a22; border: 1px solid #2a8a3a66; margin-bottom: 1rem; }
  textarea { width: 100%; box-sizing: border-box; min-height: 6rem; padding: .6rem; font: .85rem ui-monospace, monospace; border: 1px solid var(--line); border-radius: 6px; }
  input[type=url] { width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid var(--line); border-radius: 6px; }
  nav.back { margin-top: 1.6rem; }
  .actions { align-items: center; }
  a.primary { display: inline-block; padding: .65rem 1.1rem; border-radius: 6px; background: var(--brand); color: var(--on-brand); text-decoration: none; }
  h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
`;

export const wordsOf = (c: Context<AppEnv>): { words: Words; lang: string; t: Catalogue["pages"] } => {
  const catalogue = catalogueFor(c);
  return { words: catalogue.setupLinks, lang: catalogue.pages.lang, t: catalogue.pages };
};

/** A date for people, in the page's language, in UTC (the server knows no reader's time zone). */
export function dateOf(ms: number, lang: string): string {
  try {
    return `${new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(new Date(ms))} UTC`;
  } catch {
    return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  }
}

/** The pages' own URLs (paths: forms post to whichever host served the page). */
export const setupPath = (c: Context<AppEnv>, path = "") => `${c.var.config.urls.authPath}/setup${path}`;

export function setupPage(
  c: Context<AppEnv>,
  status: 200 | 400 | 403 | 404 | 429 | 503,
  title: string,
  body: Body,
) {
  const { t } = wordsOf(c);
  // The token never sits in a page: nothing on it is worth caching either.
  c.header("Cache-Control", "no-store");
  return render(c, status, title, body, { t, style: STYLE });
}

/** The one page for every refused link: mistyped, unknown, expired, revoked, or too many guesses. */
export function gonePage(c: Context<AppEnv>, wait?: number) {
  const { words } = wordsOf(c);
  const message = wait === undefined ? words.gone : words.tooMany(wait);
  if (wait !== undefined) c.header("Retry-After", String(wait));
  return setupPage(
    c,
    wait === undefined ? 404 : 429,
    words.goneTitle,
    html`<h1>${words.goneTitle}</h1><p class="lead">${message}</p>`,
  );
}

export const copyValue = (label: string, value: string) =>
  html`<dt>${label}</dt><dd><code class="copy">${value}</code></dd>`;

export const notice = (kind: "ok" | "error", message: string | undefined) =>
  message ? html`<div class="${kind}" role="${kind === "error" ? "alert" : "status"}">${message}</div>` : "";

export const backLink = (c: Context<AppEnv>, words: Words) =>
  html`<nav class="back"><a href="${setupPath(c)}">${words.back}</a></nav>`;

export const linkHeader = (words: Words, orgName: string, link: SetupLinkRow, lang: string) =>
  html`<h1>${words.title(orgName)}</h1><p class="lead">${words.lead}</p><p class="status">${words.expires(dateOf(link.expiresAt, lang))}</p>`;
