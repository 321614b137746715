import type { FedCmAsk } from "../oauth2";

/** The most of the relying party's `params` JSON read: a PKCE challenge, a scope, a nonce fit in far less. */
const MAX_PARAMS_LENGTH = 4096;

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * What the relying party asked in the ID assertion request (W3C FedCM § Identity assertion endpoint): `params` is
 * the JSON object its page passed (`navigator.credentials.get({identity: {providers: [{params}]}})`), where the
 * OAuth2 parts of the ask travel: `code_challenge` and `code_challenge_method` (RFC 7636), `scope`, and `nonce`
 * (which older browsers send beside it as a field of its own). Null for a malformed one, or a field that is not a
 * string: refused, never read as absent.
 */
export function readAsk(form: Map<string, string>): FedCmAsk | null {
  const raw = form.get("params");
  let params: Record<string, unknown> = {};
  if (raw !== undefined) {
    if (raw.length > MAX_PARAMS_LENGTH) return null;
    try {
      params = JSON.parse(raw);
    } catch {
      return null;
    }
    if (typeof params !== "object" || params === null || Array.isArray(params)) return null;
  }
  for (const name of ["code_challenge", "code_challenge_method", "scope", "nonce"]) {
    if (params[name] !== undefined && typeof params[name] !== "string") return null;
  }
  const fieldNonce = form.get("nonce");
  const paramsNonce = text(params.nonce);
  // Both given and different: one of them was not the page's, and the ID token could carry only one.
  if (fieldNonce !== undefined && paramsNonce !== undefined && fieldNonce !== paramsNonce) return null;
  const nonce = paramsNonce ?? fieldNonce;
  const codeChallenge = text(params.code_challenge);
  const codeChallengeMethod = text(params.code_challenge_method);
  const scope = text(params.scope);
  return {
    ...(nonce !== undefined ? { nonce } : {}),
    ...(codeChallenge !== undefined ? { codeChallenge } : {}),
    ...(codeChallengeMethod !== undefined ? { codeChallengeMethod } : {}),
    ...(scope !== undefined ? { scope } : {}),
    disclosureShown: form.get("disclosure_text_shown") === "true",
  };
}
