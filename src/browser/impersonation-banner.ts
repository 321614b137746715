import { html } from "hono/html";
import type { Ctx } from "./page-paths";
import { CATALOGUES, LANGUAGES, type Language } from "./text";

/**
 * The banner every page shows while the browser's session is an impersonation (contract operators.md §1): who acts,
 * in the page's language, above the brand. The session read (session.ts) notes the actor on the request; the page
 * shell (page-response.ts) shows it, so no page has a line of its own for it and none can forget it.
 */

const actors = new WeakMap<Request, string>();

/** Called by the session read: this request's page session is an impersonation by `actor`. */
export function noteImpersonation(c: Ctx, actor: string): void {
  actors.set(c.req.raw, actor);
}

/** The banner's CSS: constant text (the page's nonce'd stylesheet carries it). */
export const BANNER_STYLE =
  ".impersonation-banner{background:#7a1f00;color:#fff;padding:.75rem 1rem;margin:0 0 1rem;border-radius:.375rem;font-weight:600}";

/** The banner for this request's page, in `lang`, or nothing. */
export function impersonationBanner(c: Ctx, lang: string) {
  const actor = actors.get(c.req.raw);
  if (!actor) return undefined;
  const language = (LANGUAGES as readonly string[]).includes(lang) ? (lang as Language) : "en";
  return html`<div class="impersonation-banner" role="alert">${CATALOGUES[language].impersonation.banner(actor)}</div>`;
}
