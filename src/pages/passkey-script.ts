import { UNKNOWN_CREDENTIAL_MESSAGE } from "../auth";
import { passkeyPrelude } from "./passkey-prelude";
import { passkeySignUpPart } from "./passkey-sign-up-script";

/**
 * The one passkey script of the built-in page's sign-in, sign-up and reset views, served with a nonce when security
 * keys are on: a passkey sign-in with the ordinary API (`/signin/webauthn`, discoverable credentials, no email
 * asked), from the button or from the autofill of any username field the view has (conditional mediation, WebAuthn
 * L3 §5.1.4.2, `autocomplete="username webauthn"`, where the browser supports it), whose refresh token is then
 * posted to the page (`/oauth2/interaction/session`) as a form, where it becomes the page's cookie; on the sign-up
 * view, a passkey-only sign-up too (./passkey-sign-up-script.ts). Nothing from the request is interpolated, only the
 * API's path, as JSON.
 */
export function passkeyScript(apiPath: string): string {
  return `
(() => {${passkeyPrelude(apiPath, { button: "passkey", form: "passkey-session", problem: "passkey-problem" })}
  const toPage = (session) => {
    form.elements.refresh_token.value = session.refreshToken;
    form.submit();
  };
  // One ceremony at a time: the autofill one (conditional mediation) waits in the background until the person
  // picks a passkey from a username field's suggestions; the button aborts it and asks outright.
  let pending = null;
  const signIn = async (mediation) => {
    pending?.abort();
    const controller = new AbortController();
    pending = controller;
    const options = await post("/signin/webauthn", {});
    const credential = await navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
      signal: controller.signal,
      ...(mediation ? { mediation } : {}),
    });
    const answer = await post("/signin/webauthn/verify", { credential: credential.toJSON() }).catch((refusal) => {
      // WebAuthn L3 §5.1.10.1: only on the service's positive "unknown credential", never on a timeout or another
      // error, so the password manager stops offering a passkey the account no longer has and keeps every other.
      if (refusal.answer?.message === ${JSON.stringify(UNKNOWN_CREDENTIAL_MESSAGE)}) {
        PublicKeyCredential.signalUnknownCredential?.({ rpId: options.rpId, credentialId: credential.id })?.catch(
          () => {},
        );
      }
      throw refusal;
    });
    if (!answer.session) throw new Error("no session");
    toPage(answer.session);
  };
  button?.addEventListener("click", async () => {
    if (problem) problem.hidden = true;
    try {
      await signIn();
    } catch {
      if (problem) problem.hidden = false;
    }
  });
  // Asked for on a username field's first focus, not on load: each ceremony is a challenge counted in BRUTE_FORCE,
  // and a page that is only passed through (consent, a wrong password's second try) should not spend one. One
  // conditional request serves every field marked \`webauthn\` on the view.
  let asked = false;
  for (const field of document.querySelectorAll('input[autocomplete~="webauthn"]')) {
    field.addEventListener(
      "focus",
      () => {
        if (asked) return;
        asked = true;
        PublicKeyCredential.isConditionalMediationAvailable?.().then((available) => {
          if (available) signIn("conditional").catch(() => {});
        });
      },
      { once: true },
    );
  }${passkeySignUpPart()}
})();`;
}
