import { createMiddleware } from "hono/factory";
import { decodeJwt } from "jose";
import type { OAuth2ClientRow } from "../db/schema";
import type { AppEnv } from "../http/app-env";
import { documentedHeader } from "../http/documented";
import { currentDPoPNonce } from "../lib/dpop-nonces";
import {
  DPOP_SIGNING_ALGORITHMS,
  DPoPProofError,
  dpopTargets,
  type VerifiedDPoPProof,
  verifyDPoPProof,
} from "../replay/dpop-proof";
import { OAuth2Error } from "./errors";
import type { Ctx } from "./route-support";

/**
 * DPoP (RFC 9449) at the authorization server's own endpoints: the token endpoint binds what it issues to the key
 * of the request's proof, and userinfo (dpop-resources.ts) accepts a bound token only with a proof by that key. The
 * proof itself is checked by the shared plumbing (src/replay/dpop-proof.ts).
 */

/** What a token request's proof binds its tokens to: the key's thumbprint (`cnf.jkt`), or nothing (a bearer token). */
export interface TokenBinding {
  dpopJkt: string | null;
}

export const UNBOUND: TokenBinding = { dpopJkt: null };

/** The `DPoP-Nonce` header of every answer while nonces are on (§8: the client keeps the newest one). */
export async function dpopNonceHeaders(c: Ctx): Promise<Record<string, string>> {
  const { config } = c.var;
  if (!config.oauth2.dpopNonce) return {};
  return { "DPoP-Nonce": await currentDPoPNonce(config.secrets.encryptionKey, c.var.deps.now()) };
}

/**
 * On the token endpoint (and the other endpoints a proof may come to): documents the `DPoP` request header, and
 * adds `DPoP-Nonce` to every answer, errors included, while nonces are on, so a client always has a current one.
 */
export const dpopEndpoint = documentedHeader(
  createMiddleware<AppEnv>(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(await dpopNonceHeaders(c))) c.res.headers.set(name, value);
  }),
  {
    name: "DPoP",
    description:
      "RFC 9449: a DPoP proof (a JWT of type dpop+jwt signed by the client's key, with htm, htu, iat, jti; ath with " +
      "an access token; the server's nonce when it sends `DPoP-Nonce`). The tokens issued are bound to that key.",
  },
);

/** A proof refused at an endpoint that issues tokens: 400, with the nonce to use when that was the reason (§5, §8). */
async function tokenEndpointError(c: Ctx, error: DPoPProofError): Promise<OAuth2Error> {
  const headers = error.nonce ? { "DPoP-Nonce": error.nonce } : await dpopNonceHeaders(c);
  return new OAuth2Error(error.code, error.message, undefined, undefined, undefined, headers);
}

/**
 * The request's DPoP proof at an endpoint of this server (its URL as `htu`), checked once; null without a `DPoP`
 * header. `accessToken` when the proof comes with one (`ath`).
 */
export async function dpopProofOf(c: Ctx, accessToken?: string): Promise<VerifiedDPoPProof | null> {
  const { config, deps } = c.var;
  return verifyDPoPProof(deps, {
    header: c.req.header("dpop"),
    method: c.req.method,
    urls: dpopTargets(c.req.url, config.urls.server, config.urls.authPrefix),
    accessToken,
    nonceKey: config.oauth2.dpopNonce ? config.secrets.encryptionKey : undefined,
  });
}

/**
 * The binding of a token request (RFC 9449 §5): the key of its proof, checked before any grant is looked at (so a bad
 * proof spends no code or refresh token). A client registered as DPoP-bound (`dpop_bound_access_tokens`) gets no
 * bearer token: without a proof it is refused with `invalid_grant`, as oidc-provider does and as the FAPI 2.0
 * conformance suite expects of a refresh without proof of possession (`invalid_dpop_proof` is for a proof that came
 * and failed).
 */
export async function tokenRequestBinding(c: Ctx, client: OAuth2ClientRow): Promise<TokenBinding> {
  let proof: VerifiedDPoPProof | null;
  try {
    proof = await dpopProofOf(c);
  } catch (error) {
    throw error instanceof DPoPProofError ? await tokenEndpointError(c, error) : error;
  }
  if (!proof && client.dpopBoundAccessTokens) {
    const headers = await dpopNonceHeaders(c);
    throw new OAuth2Error(
      "invalid_grant",
      "this client's tokens are DPoP-bound: send a DPoP proof",
      undefined,
      undefined,
      undefined,
      headers,
    );
  }
  return { dpopJkt: proof?.jkt ?? null };
}

/**
 * For the pushed authorization request endpoint (RFC 9449 §10.1): a proof sent there binds the code the request will
 * give to the proof's key, as `dpop_jkt` does; both at once must name the same key. Sets `dpop_jkt` in the pushed
 * parameters, which the authorization request then carries to the code (authorize.ts).
 */
export async function bindPushedRequestToProof(c: Ctx, params: Map<string, string>): Promise<void> {
  let proof: VerifiedDPoPProof | null;
  try {
    proof = await dpopProofOf(c);
  } catch (error) {
    throw error instanceof DPoPProofError ? await tokenEndpointError(c, error) : error;
  }
  if (!proof) return;
  const named = params.get("dpop_jkt");
  if (named !== undefined && named !== proof.jkt) {
    throw new OAuth2Error("invalid_dpop_proof", "dpop_jkt is not the thumbprint of the DPoP proof's key");
  }
  params.set("dpop_jkt", proof.jkt);
}

/**
 * Every token answer goes through here (token-requests.ts `tokenRequest`): with a proof, the access token must carry
 * the proof's key (`cnf.jkt`, §6.1) and the answer says `token_type: DPoP` (§5); a grant handler that did not bind its
 * token is refused rather than let a client believe an unbound token is bound.
 */
export function boundAnswer<T extends { access_token: string; token_type: string }>(
  answer: T,
  binding: TokenBinding,
): T & { token_type: "Bearer" | "DPoP" } {
  if (!binding.dpopJkt) return { ...answer, token_type: "Bearer" };
  const cnf = decodeJwt(answer.access_token).cnf as { jkt?: unknown } | undefined;
  if (cnf?.jkt !== binding.dpopJkt) {
    throw new OAuth2Error(
      "invalid_dpop_proof",
      "this grant does not issue DPoP-bound tokens: send the request without a DPoP proof",
    );
  }
  return { ...answer, token_type: "DPoP" };
}

/** `dpop_signing_alg_values_supported` (§5.1) and the `algs` of a resource's challenge (§7.1). */
export const DPOP_ALGS = [...DPOP_SIGNING_ALGORITHMS];
