import { html } from "hono/html";
import type { PageText } from "../browser/page-text";
import { hidden } from "../browser/render";
import type { Passkeys } from "../browser/text/en/passkeys";

/**
 * The passkey parts of the sign-up and reset views (docs/passkeys.md), which the page's passkey script
 * (passkey-script.ts) finds by id: the form an autofill sign-in's session is posted through (as on the sign-in view),
 * and on the sign-up view the passkey-only sign-up's button, its problem and its "check your email". Hidden until
 * the script shows what the browser can do.
 */
export function passkeyParts(input: {
  t: PageText;
  words: Passkeys;
  sessionAction: string;
  requestId: string;
  signUp: boolean;
}) {
  const { t, words } = input;
  // The reset view shows nothing of it until a passkey sign-in fails: no separator for an empty part.
  return html`<div${input.signUp ? html` class="alternative"` : ""}>
  ${
    input.signUp
      ? html`<button id="passkey-sign-up" type="button" hidden>${words.signUp}</button>
  <p id="passkey-sign-up-problem" class="error" role="alert" hidden>${words.signUpProblem}</p>
  <p id="passkey-sign-up-mailed" class="note" role="status" hidden>${words.signUpMailed}</p>`
      : ""
  }
  <p id="passkey-problem" class="error" role="alert" hidden>${t.passkeyProblem}</p>
  <form id="passkey-session" method="post" action="${input.sessionAction}">
    ${hidden(input.requestId)}
    <input type="hidden" name="refresh_token" value="">
  </form>
</div>`;
}

/** A username field's `autocomplete`: `webauthn` too where the view offers the passkey autofill (WebAuthn L3 §5.1.4.2). */
export const usernameAutocomplete = (passkeys: boolean) => (passkeys ? "username webauthn" : "email");
