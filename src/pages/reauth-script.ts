import { passkeyPrelude } from "./passkey-prelude";

/**
 * The re-authentication step's passkey script (served with a nonce, like passkey-script.ts): a ceremony with the
 * ordinary API for the signed-in person's own keys (`/signin/webauthn` with their email, read from the button's
 * `data-email`; discoverable credentials when they have none), whose session's refresh token is posted to the step
 * (`/oauth2/interaction/reauth/passkey`), which spends it and keeps only the proof (reauth-proofs.ts). Nothing from the
 * request is interpolated, only the API's path, as JSON.
 */
export function reauthPasskeyScript(apiPath: string): string {
  return `
(() => {${passkeyPrelude(apiPath, { button: "reauth-passkey", form: "reauth-passkey-form", problem: "reauth-passkey-problem" })}
  button?.addEventListener("click", async () => {
    problem.hidden = true;
    try {
      const email = button.dataset.email;
      const options = await post("/signin/webauthn", email ? { email } : {});
      const credential = await navigator.credentials.get({
        publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
      });
      const answer = await post("/signin/webauthn/verify", { credential: credential.toJSON() });
      if (!answer.session) throw new Error("no session");
      form.elements.refresh_token.value = answer.session.refreshToken;
      form.submit();
    } catch {
      problem.hidden = false;
    }
  });
})();`;
}
