/**
 * The sign-up view's passkey-only sign-up (docs/passkeys.md), a part of the page's passkey script (passkey-script.ts,
 * inside its function: `post`, `toPage`, `pending` are its): the email and name typed in the view's form, the
 * ordinary API (`/signup/webauthn` and its `/verify`, the same gate as any sign-up), no password. A session goes to
 * the page as the sign-in's does; none (the address must be verified first) shows the view's "check your email".
 * Nothing from the request is interpolated.
 */
export function passkeySignUpPart(): string {
  return `
  const signUpButton = document.getElementById("passkey-sign-up");
  const signUpProblem = document.getElementById("passkey-sign-up-problem");
  const mailed = document.getElementById("passkey-sign-up-mailed");
  if (signUpButton && PublicKeyCredential.parseCreationOptionsFromJSON) {
    signUpButton.hidden = false;
    signUpButton.addEventListener("click", async () => {
      signUpProblem.hidden = true;
      const email = document.getElementById("email");
      if (!email.reportValidity()) return;
      const displayName = document.getElementById("display-name")?.value.trim();
      const options = displayName ? { displayName } : {};
      try {
        pending?.abort();
        const creation = await post("/signup/webauthn", { email: email.value.trim(), options });
        const credential = await navigator.credentials.create({
          publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(creation),
        });
        const answer = await post("/signup/webauthn/verify", { credential: credential.toJSON(), options });
        if (answer.session) toPage(answer.session);
        else mailed.hidden = false;
      } catch {
        signUpProblem.hidden = false;
      }
    });
  }`;
}
