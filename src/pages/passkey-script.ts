import { passkeyPrelude } from "./passkey-prelude";

/**
 * The one script of the built-in page, served with a nonce when security keys are on: a passkey sign-in with the
 * ordinary API (`/signin/webauthn`, discoverable credentials, no email asked), from the button or from the email
 * field's autofill (conditional mediation, where the browser supports it), whose refresh token is then posted to
 * the page (`/oauth2/interaction/session`) as a form, where it becomes the page's cookie. Nothing from the request
 * is interpolated, only the API's path, as JSON.
 */
export function passkeyScript(apiPath: string): string {
  return `
(() => {${passkeyPrelude(apiPath, { button: "passkey", form: "passkey-session", problem: "passkey-problem" })}
  // One ceremony at a time: the autofill one (conditional mediation) waits in the background until the person
  // picks a passkey from the email field's suggestions; the button aborts it and asks outright.
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
    const answer = await post("/signin/webauthn/verify", { credential: credential.toJSON() });
    if (!answer.session) throw new Error("no session");
    form.elements.refresh_token.value = answer.session.refreshToken;
    form.submit();
  };
  button.addEventListener("click", async () => {
    problem.hidden = true;
    try {
      await signIn();
    } catch {
      problem.hidden = false;
    }
  });
  // Asked for on the email field's first focus, not on load: each ceremony is a challenge counted in BRUTE_FORCE,
  // and a page that is only passed through (consent, a wrong password's second try) should not spend one.
  const email = document.getElementById("email");
  email?.addEventListener(
    "focus",
    () => {
      PublicKeyCredential.isConditionalMediationAvailable?.().then((available) => {
        if (available) signIn("conditional").catch(() => {});
      });
    },
    { once: true },
  );
})();`;
}
