import type { Config } from "../config";

/**
 * Google's One Tap through FedCM on the hosted sign-in page (docs/fedcm.md, relying party): the browser's own prompt
 * offers the Google account it is signed in to; the Google ID token it hands the page goes to the ordinary API's
 * ID-token sign-in (`/signin/idtoken`, src/providers/id-token-sign-in.ts, with the page's nonce, which the token
 * must carry), and the session's refresh token is posted to the page as the passkey script's is
 * (`/oauth2/interaction/session`), where it becomes the page's cookie. Nothing new is trusted: the token is checked
 * exactly as a native app's. A second factor, a refusal, a dismissed prompt: the page's form stays as it was.
 */

export interface OneTap {
  /** The script, appended to the page's one script (its nonce); only JSON of the configuration in it. */
  script: string;
  /** The config file's origin, which the page's CSP must let the browser reach (`connect-src`). */
  origin: string;
}

/** One Tap for this deployment, or undefined: Google's ID-token sign-in off, or its web client not an audience. */
export function googleOneTap(config: Config): OneTap | undefined {
  const web = config.providers.enabled.google;
  const idTokens = config.providers.idTokens.google;
  if (!config.fedcm.googleOneTap || !web || !idTokens?.audiences.includes(web.clientId)) return undefined;
  const json = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");
  const script = `
(() => {
  const form = document.getElementById("passkey-session");
  if (!form || !window.IdentityCredential || !navigator.credentials) return;
  const api = ${json(config.urls.authPath)};
  const nonce = crypto.randomUUID();
  navigator.credentials
    .get({
      identity: {
        context: "signin",
        providers: [{ configURL: ${json(config.fedcm.googleConfigUrl)}, clientId: ${json(web.clientId)}, nonce, params: { nonce } }],
      },
      mediation: "optional",
    })
    .then(async (credential) => {
      const response = await fetch(api + "/signin/idtoken", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "google", idToken: credential.token, nonce }),
      });
      const answer = response.ok ? await response.json() : null;
      if (!answer || !answer.session) return;
      form.elements.refresh_token.value = answer.session.refreshToken;
      form.submit();
    })
    .catch(() => {});
})();`;
  return { script, origin: new URL(config.fedcm.googleConfigUrl).origin };
}
