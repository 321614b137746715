import { presented } from "../http/auth";
import { DPoPProofError, type VerifiedDPoPProof } from "../replay/dpop-proof";
import { DPOP_ALGS, dpopNonceHeaders, dpopProofOf } from "./dpop";
import { OAuth2Error } from "./errors";
import type { Ctx } from "./route-support";

/**
 * The authorization server as a resource (userinfo): an access token comes as `Bearer` (RFC 6750) or, bound to a
 * key, as `DPoP` with a proof by that key (RFC 9449 §7). Schemes are case-insensitive (RFC 9110 §11.1).
 */
export type TokenScheme = "Bearer" | "DPoP";

type ResourceErrorCode = "invalid_token" | "insufficient_scope" | "invalid_dpop_proof" | "use_dpop_nonce";

/**
 * An error of a resource with its challenge: RFC 6750 §3 for a bearer request, RFC 9449 §7.1 for a DPoP one; a bearer
 * request is told about DPoP too (`algs`, §7.2), so a client learns it may use it.
 */
export function resourceError(
  scheme: TokenScheme,
  error: ResourceErrorCode,
  description: string,
  headers?: Record<string, string>,
): OAuth2Error {
  const params = `error="${error}", error_description="${description}"`;
  const algs = `algs="${DPOP_ALGS.join(" ")}"`;
  const challenge = scheme === "DPoP" ? `DPoP ${params}, ${algs}` : `Bearer ${params}, DPoP ${algs}`;
  return new OAuth2Error(
    error,
    description,
    challenge,
    undefined,
    error === "insufficient_scope" ? 403 : 401,
    headers,
  );
}

/** The request's access token and the scheme it came with; the scheme is `Bearer` when there is none. */
export function presentedToken(c: Ctx): { scheme: TokenScheme; token?: string } {
  return presented(c.req.header("authorization")) ?? { scheme: "Bearer" };
}

/**
 * An access token a resource request presents, verified by `verify`, and held by its sender (RFC 9449 §7.1): a token
 * bound to a key (`cnf.jkt`) only with the DPoP scheme and a proof by that key, over this request and this token
 * (`ath`), used once; a bound token sent as `Bearer` is refused (a thief with the token has no key). An unbound token
 * comes as `Bearer` only: the DPoP scheme asks for a binding it does not have.
 */
export async function heldAccessToken<P extends { cnf?: { jkt: string } }>(
  c: Ctx,
  verify: (token: string) => Promise<P | null>,
): Promise<{ payload: P; scheme: TokenScheme }> {
  const { scheme, token } = presentedToken(c);
  const invalid = (why = "the access token is invalid, expired or revoked") =>
    resourceError(scheme, "invalid_token", why);
  const payload = token ? await verify(token) : null;
  if (!token || !payload) throw invalid();
  const bound = payload.cnf?.jkt;
  if (!bound) {
    if (scheme === "DPoP") throw invalid("this access token is not DPoP-bound: send it as a Bearer token");
    return { payload, scheme };
  }
  if (scheme === "Bearer") {
    throw resourceError(
      "DPoP",
      "invalid_token",
      "this access token is DPoP-bound: send it as DPoP with a proof",
    );
  }
  let proof: VerifiedDPoPProof | null;
  try {
    proof = await dpopProofOf(c, token);
  } catch (error) {
    if (!(error instanceof DPoPProofError)) throw error;
    const headers = error.nonce ? { "DPoP-Nonce": error.nonce } : await dpopNonceHeaders(c);
    throw resourceError("DPoP", error.code, error.message, headers);
  }
  if (!proof) throw resourceError("DPoP", "invalid_dpop_proof", "a DPoP proof must come with this token");
  if (proof.jkt !== bound) {
    throw resourceError("DPoP", "invalid_dpop_proof", "the DPoP proof is not signed by the token's key");
  }
  return { payload, scheme };
}
