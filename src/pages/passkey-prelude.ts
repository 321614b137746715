/**
 * The opening both passkey scripts of the pages share (the sign-in page's, passkey-script.ts, and the
 * re-authentication step's, reauth-script.ts): the API's path as JSON (nothing from the request is interpolated),
 * the button (a page may have none: the sign-up and reset views offer the autofill only), the form its session is
 * posted through and the place for a problem, found by id, the button shown only where the browser can run the
 * ceremony, and a JSON POST to the API. What follows it is each script's own.
 */
export function passkeyPrelude(
  apiPath: string,
  ids: { button: string; form: string; problem: string },
): string {
  const api = JSON.stringify(apiPath).replace(/</g, "\\u003c");
  return `
  const api = ${api};
  const button = document.getElementById(${JSON.stringify(ids.button)});
  const form = document.getElementById(${JSON.stringify(ids.form)});
  const problem = document.getElementById(${JSON.stringify(ids.problem)});
  if (!form || !window.PublicKeyCredential || !PublicKeyCredential.parseRequestOptionsFromJSON) return;
  if (button) button.hidden = false;
  const post = async (path, body) => {
    const response = await fetch(api + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      // The API's error answer ({status, error, message}) goes with the refusal, for a script that reads it.
      const refusal = new Error("refused");
      refusal.answer = await response.json().catch(() => null);
      throw refusal;
    }
    return response.json();
  };`;
}
