import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { BrowserSession } from "../browser/session";
import type { Catalogue } from "../browser/text";

/**
 * The account center while someone acts as the user (contract operators.md §1): every post of it is refused already
 * (src/browser/session.ts answers 403 `forbidden`), so its change forms — password, email, profile, passkeys, TOTP,
 * tokens, deletion, linked providers, vault connections, and any added later — are shown read-only rather than
 * offered and then refused. One `<fieldset disabled>` around the page's body disables every control inside it (the
 * HTML standard's rule, scripts' buttons included) and keeps every value readable and announced as unavailable, so
 * the support engineer still sees what the user sees. The frame's sign-out (outside the body) stays: an impersonation
 * may end itself. Links (the approval pages of "waiting for you") stay links: reading is allowed, deciding is not.
 */

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

const NOTE_ID = "read-only-note";

/** Its CSS: the fieldset takes no room of its own; disabled controls look it. Constant text. */
export const READ_ONLY_STYLE = `
  fieldset.read-only { border: 0; margin: 0; padding: 0; min-width: 0; }
  fieldset.read-only :disabled { opacity: .6; cursor: not-allowed; }
`;

/** `body` as it is for the user's own session; read-only, with the one line saying why, for an impersonation. */
export function readOnlyWhileImpersonating(session: BrowserSession, catalogue: Catalogue, body: Body): Body {
  if (!session.actor) return body;
  return html`<p id="${NOTE_ID}" class="notice read-only-note">${catalogue.impersonation.readOnly}</p>
<fieldset class="read-only" disabled aria-describedby="${NOTE_ID}">${body}</fieldset>`;
}
