/**
 * The one script of the built-in page, served with a nonce when security keys are on: a passkey sign-in with the
 * ordinary API (`/signin/webauthn`, discoverable credentials, no email asked), whose refresh token is then posted to
 * the page (`/oauth2/interaction/session`) as a form, where it becomes the page's cookie. Nothing from the request
 * is interpolated, only the API's path, as JSON.
 */
export function passkeyScript(apiPath: string): string {
  const api = JSON.stringify(apiPath).replace(/</g, "\\u003c");
  return `
(() => {
  const api = ${api};
  const button = document.getElementById("passkey");
  const form = document.getElementById("passkey-session");
  const problem = document.getElementById("passkey-problem");
  if (!button || !form || !window.PublicKeyCredential || !PublicKeyCredential.parseRequestOptionsFromJSON) return;
  button.hidden = false;
  const post = async (path, body) => {
    const response = await fetch(api + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error("refused");
    return response.json();
  };
  button.addEventListener("click", async () => {
    problem.hidden = true;
    try {
      const options = await post("/signin/webauthn", {});
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
