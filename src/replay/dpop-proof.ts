import {
  base64url,
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
} from "jose";
import type { Env } from "../env";
import { currentDPoPNonce, isCurrentDPoPNonce } from "../lib/dpop-nonces";
import { claimJtiOnce } from "./jti-ledger";

/**
 * DPoP proofs (RFC 9449): a JWT the client signs with a key it holds, for one HTTP request, carrying that key's public
 * half. The token endpoint binds the tokens it issues to the key's thumbprint (`cnf.jkt`); a resource server accepts
 * such a token only with a fresh proof by the same key. Shared by the authorization server (src/oauth2) and the
 * service's own APIs (src/http/auth.ts), so that both check exactly the list of RFC 9449 §4.3.
 */

/**
 * Asymmetric algorithms only (§4.3 item 5). The FAPI 2.0 security profile (§5.4) allows PS256, ES256 and EdDSA, and
 * its conformance suite expects an RS256 proof to be refused (PKCS#1 v1.5 signatures), so RS256 is not on the list;
 * ES384 is as strong and common in libraries; `Ed25519` is EdDSA's fully-specified name (RFC 9864).
 */
export const DPOP_SIGNING_ALGORITHMS = ["ES256", "ES384", "PS256", "EdDSA", "Ed25519"] as const;

/** How old a proof may be (its `iat`), and how far ahead of our clock: a proof is made for the request it comes in. */
const MAX_AGE_SECONDS = 300;
const MAX_SKEW_SECONDS = 60;
/** A proof with a 4096-bit RSA key is under 2 KB; anything much longer is no proof. */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;
/** Members of a private or symmetric JWK: a proof's key must be public (§4.3 item 7). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/**
 * Why a proof was refused: `invalid_dpop_proof` (§5, §7.1), or `use_dpop_nonce` (§8, §9) with the nonce to use
 * (`DPoP-Nonce`). The caller answers in its own error shape: 400 at a token endpoint, 401 with a `DPoP` challenge at
 * a resource.
 */
export class DPoPProofError extends Error {
  constructor(
    readonly code: "invalid_dpop_proof" | "use_dpop_nonce",
    message: string,
    readonly nonce?: string,
  ) {
    super(message);
    this.name = "DPoPProofError";
  }
}

export interface DPoPRequest {
  /** The request's `DPoP` header as `Headers.get` gives it (several headers come joined with commas). */
  header: string | undefined;
  method: string;
  /**
   * The URLs the request may have been sent to (`htu`, §4.3 item 9): its own URL, and the one this server advertises
   * for it (the two differ behind a proxy).
   */
  urls: string[];
  /** The access token presented with the proof, which `ath` must hash (§4.3 item 12). */
  accessToken?: string;
  /** `AUTH_ENCRYPTION_KEY` when the proof must carry a current server nonce (§8); undefined: no nonce asked. */
  nonceKey?: string;
}

export interface VerifiedDPoPProof {
  /** The key's JWK SHA-256 thumbprint (RFC 7638), what tokens are bound to (`cnf.jkt`, §6.1). */
  jkt: string;
}

type Deps = { env: Pick<Env, "JTI_LEDGERS">; now: () => number };

const invalid = (why: string) => new DPoPProofError("invalid_dpop_proof", why);

/**
 * A request's DPoP proof checked as RFC 9449 §4.3 lists (one header, a well-formed JWT of type `dpop+jwt`, an
 * asymmetric algorithm we accept, a public key that verifies the signature, `htm`, `htu`, `iat`, `jti`, `ath`, the
 * nonce), then its `jti` recorded for the proof's lifetime so that it is accepted once (§11.1): of two requests
 * with one proof, exactly one gets through. Null when the request has no `DPoP` header at all.
 */
export async function verifyDPoPProof(deps: Deps, request: DPoPRequest): Promise<VerifiedDPoPProof | null> {
  if (request.header === undefined) return null;
  const proof = request.header.trim();
  if (!proof) throw invalid("the DPoP header is empty");
  // A JWT has no commas: one means several DPoP headers (§4.3 item 1).
  if (proof.includes(",")) throw invalid("more than one DPoP header");
  if (proof.length > MAX_PROOF_LENGTH) throw invalid("the DPoP proof is too long");
  const jwk = checkedHeader(proof);
  const payload = await verifiedPayload(proof, deps.now());
  checkClaims(payload, request, deps.now());
  if (request.accessToken !== undefined && payload.ath !== (await accessTokenHash(request.accessToken))) {
    throw invalid("ath does not match the access token");
  }
  if (request.nonceKey) await checkNonce(payload, request.nonceKey, deps.now());
  const jkt = await calculateJwkThumbprint(jwk, "sha256");
  const expiresAt = ((payload.iat as number) + MAX_AGE_SECONDS) * 1000;
  if (!(await claimJtiOnce(deps, "dpop", jkt, payload.jti as string, expiresAt))) {
    throw invalid("this DPoP proof was used before: make a new one for every request");
  }
  return { jkt };
}

/** The protected header's checks (§4.3 items 2–5, 7); returns the proof's public key. */
function checkedHeader(proof: string): JWK {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw invalid("the DPoP proof is not a well-formed JWT");
  }
  if (typeof header.typ !== "string" || header.typ.toLowerCase() !== "dpop+jwt") {
    throw invalid("the DPoP proof's typ must be dpop+jwt");
  }
  if (!(DPOP_SIGNING_ALGORITHMS as readonly string[]).includes(String(header.alg))) {
    throw invalid(`the DPoP proof's alg must be one of ${DPOP_SIGNING_ALGORITHMS.join(", ")}`);
  }
  const jwk = header.jwk;
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) {
    throw invalid("the DPoP proof's header has no jwk");
  }
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) {
    throw invalid("the DPoP proof's jwk must be a public key");
  }
  if (!["EC", "RSA", "OKP"].includes(String(jwk.kty)))
    throw invalid("the DPoP proof's jwk has no usable kty");
  return jwk;
}

/** The signature by the header's own key (§4.3 item 6), and `exp`/`nbf` when the client sent them. */
async function verifiedPayload(proof: string, now: number): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(proof, EmbeddedJWK, {
      typ: "dpop+jwt",
      algorithms: [...DPOP_SIGNING_ALGORITHMS],
      currentDate: new Date(now),
      clockTolerance: MAX_SKEW_SECONDS,
    });
    return payload;
  } catch {
    throw invalid("the DPoP proof's signature does not verify with its jwk");
  }
}

/** `htm`, `htu`, `iat` and `jti` (§4.2, §4.3 items 3, 8, 9, 11). */
function checkClaims(payload: JWTPayload, request: DPoPRequest, now: number): void {
  const { htm, htu, iat, jti } = payload;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
    throw invalid(`the DPoP proof needs a jti of at most ${MAX_JTI_LENGTH} characters`);
  }
  if (htm !== request.method) throw invalid(`the DPoP proof's htm must be ${request.method}`);
  const target = typeof htu === "string" ? normalisedTarget(htu) : null;
  if (!target || !request.urls.some((url) => normalisedTarget(url) === target)) {
    throw invalid("the DPoP proof's htu is not this request's URL");
  }
  if (typeof iat !== "number" || !Number.isFinite(iat)) throw invalid("the DPoP proof needs an iat");
  const seconds = now / 1000;
  if (iat < seconds - MAX_AGE_SECONDS || iat > seconds + MAX_SKEW_SECONDS) {
    throw invalid("the DPoP proof's iat is too far from the server's time");
  }
}

/**
 * A URL without its query and fragment, after the syntax- and scheme-based normalisation of RFC 3986 §6.2.2 and
 * §6.2.3 that RFC 9449 §4.3 asks for (the WHATWG parser lower-cases scheme and host, drops a default port, resolves
 * dot segments and an empty path); null when it is no http(s) URL.
 */
function normalisedTarget(value: string): string | null {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * The URLs a request may be said to be for (`DPoPRequest.urls`): its own, and the same path under the public URL of
 * the API it reached (`publicBase`, e.g. `AUTH_SERVER_URL`, for the paths under `prefix`), which is what discovery
 * documents and clients name when a proxy or a custom domain stands in front of the Worker.
 */
export function dpopTargets(requestUrl: string, publicBase: string, prefix: string): string[] {
  const path = new URL(requestUrl).pathname;
  if (path !== prefix && !path.startsWith(`${prefix}/`)) return [requestUrl];
  return [requestUrl, `${publicBase.replace(/\/$/, "")}${path.slice(prefix.length)}`];
}

/** `ath` (§4.2): base64url of the SHA-256 of the access token's ASCII. */
async function accessTokenHash(accessToken: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken));
  return base64url.encode(new Uint8Array(digest));
}

async function checkNonce(payload: JWTPayload, nonceKey: string, now: number): Promise<void> {
  const { nonce } = payload;
  if (typeof nonce === "string" && nonce.length <= 64 && (await isCurrentDPoPNonce(nonceKey, nonce, now)))
    return;
  throw new DPoPProofError(
    "use_dpop_nonce",
    "the DPoP proof must carry the server's current nonce (see the DPoP-Nonce header)",
    await currentDPoPNonce(nonceKey, now),
  );
}
