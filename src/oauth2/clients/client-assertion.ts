import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from "jose";
import type { OAuth2ClientRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { claimJtiOnce } from "../../replay/jti-ledger";
import { OAuth2Error } from "../errors";
import { clientKeySet, refetchedClientKeySet } from "./client-keys";

/**
 * `private_key_jwt` client authentication (RFC 7523 §2.2 and §3, OpenID Connect Core §9): the client signs a short
 * JWT about itself with a key it registered (`jwks` or `jwks_uri`), and sends it as `client_assertion`. Checked:
 * - an asymmetric algorithm only (PS256, ES256, EdDSA / Ed25519, RS256; RFC 8725 §3.1): with HS256 the "secret" would be a
 *   public key anyone has, and `none` is no signature. A registered key that names its `alg` (RFC 7517 §4.4) is
 *   used with that algorithm only, which is how a FAPI 2.0 client keeps RS256 out (FAPI 2.0 SP §5.4.1);
 * - `iss` = `sub` = the client id; `sub` is required, so a signed request object is no assertion;
 * - `aud`: the issuer identifier. At the pushed authorization request endpoint only that, as a single string
 *   (FAPI 2.0 SP §5.3.2.1-8, draft-ietf-oauth-rfc7523bis): the audience-injection attack makes a client sign for a
 *   URL a rogue server told it was its token endpoint, and PAR, being new here, has no older client to keep working.
 *   At the other endpoints also the token endpoint URL or the endpoint's own URL, as OIDC Core §9 told clients to
 *   send (Spring Security and MSAL still do);
 * - `exp` required and at most five minutes ahead (RFC 7523 §3 item 4); `nbf` and `iat` at most ten seconds ahead
 *   (clock skew; FAPI 2.0 SP §5.3.2.1 asks to accept up to 10 s and refuse over 60 s);
 * - `jti` accepted once, recorded in the JTI ledger until `exp` (RFC 7523 §3 item 7): a replay, or two requests
 *   racing with one assertion, is refused.
 */
export const CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** `Ed25519` is EdDSA's fully-specified name (RFC 9864), which oauth4webapi and openid-client sign with. */
export const CLIENT_ASSERTION_ALGORITHMS = ["PS256", "ES256", "EdDSA", "Ed25519", "RS256"];

const SKEW_SECONDS = 10;
const MAX_LIFETIME_SECONDS = 300;
const MAX_ASSERTION_LENGTH = 8192;

/**
 * Typed JWTs that are something else and never a client's authentication (RFC 8725 §3.11): an access token, a DPoP
 * proof, a logout token, an ID-JAG, a request object.
 */
const OTHER_KINDS = new Set([
  "at+jwt",
  "dpop+jwt",
  "logout+jwt",
  "secevent+jwt",
  "oauth-id-jag+jwt",
  "oauth-authz-req+jwt",
]);

const refused = (why: string, reason?: string) =>
  new OAuth2Error("invalid_client", `client authentication failed: ${why}`, undefined, reason);

/**
 * The client an assertion says it comes from (`sub`), to find the keys that verify it; nothing in it is trusted yet.
 * `client_id` in the form, when sent, must name the same client.
 */
export function assertedClientId(params: Map<string, string>): string {
  const type = params.get("client_assertion_type");
  const assertion = params.get("client_assertion");
  if (type !== CLIENT_ASSERTION_TYPE) {
    throw new OAuth2Error("invalid_request", `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`);
  }
  if (!assertion) throw new OAuth2Error("invalid_request", "client_assertion_type without client_assertion");
  if (assertion.length > MAX_ASSERTION_LENGTH) {
    throw new OAuth2Error(
      "invalid_request",
      `client_assertion is longer than ${MAX_ASSERTION_LENGTH} characters`,
    );
  }
  let claims: JWTPayload;
  try {
    claims = decodeJwt(assertion);
  } catch {
    throw refused("client_assertion is not a JWT");
  }
  if (typeof claims.sub !== "string" || claims.sub === "" || claims.sub.length > 2048) {
    throw refused("client_assertion names no client (sub)");
  }
  const formId = params.get("client_id");
  if (formId !== undefined && formId !== claims.sub) {
    throw new OAuth2Error("invalid_client", "client_id differs from the client_assertion's sub");
  }
  return claims.sub;
}

/** What jose refused, in words about the assertion only. */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "client_assertion has expired (exp)";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud")
      return "client_assertion is not for this server (aud must be the issuer identifier)";
    if (error.claim === "iss" || error.claim === "sub")
      return "client_assertion's iss and sub must be the client_id";
    if (error.claim === "nbf") return "client_assertion is not valid yet (nbf)";
    return `client_assertion has a missing or invalid ${error.claim} claim`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return "no key the client registered matches the client_assertion (kid, alg)";
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "client_assertion's signature does not verify with the client's keys";
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "client_assertion's algorithm is not accepted";
  return "client_assertion could not be verified";
}

async function verifiedPayload(
  deps: Deps,
  client: OAuth2ClientRow,
  assertion: string,
  audience: string[],
): Promise<JWTPayload> {
  const verifyWith = async (keys: JSONWebKeySet) =>
    (
      await jwtVerify(assertion, createLocalJWKSet(keys), {
        algorithms: CLIENT_ASSERTION_ALGORITHMS,
        issuer: client.clientId,
        subject: client.clientId,
        audience,
        requiredClaims: ["exp", "jti"],
        clockTolerance: SKEW_SECONDS,
        currentDate: new Date(deps.now()),
      })
    ).payload;
  try {
    const { keys, fetchedNow } = await clientKeySet(deps, client);
    try {
      return await verifyWith(keys);
    } catch (error) {
      // A key id the cached set lacks: the client may have rotated its keys. Look again (at most every 30 s).
      if (!(error instanceof errors.JWKSNoMatchingKey) || fetchedNow) throw error;
      const fresh = await refetchedClientKeySet(deps, client);
      if (!fresh) throw error;
      return await verifyWith(fresh);
    }
  } catch (error) {
    if (error instanceof OAuth2Error) throw error;
    throw refused(reasonOf(error));
  }
}

/**
 * Verifies the `client_assertion` of `client` (registered with `private_key_jwt`) sent to `endpoint` (the URL of the
 * endpoint under the issuer); `invalid_client` with what was wrong, or nothing.
 */
export async function verifyClientAssertion(
  deps: Deps,
  client: OAuth2ClientRow,
  assertion: string,
  endpoint: string,
): Promise<void> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(assertion);
  } catch {
    throw refused("client_assertion is not a signed JWT");
  }
  if (typeof header.alg !== "string" || !CLIENT_ASSERTION_ALGORITHMS.includes(header.alg)) {
    throw refused(`client_assertion must be signed with ${CLIENT_ASSERTION_ALGORITHMS.join(", ")}`);
  }
  const typ = typeof header.typ === "string" ? header.typ.toLowerCase().replace(/^application\//, "") : "";
  if (OTHER_KINDS.has(typ)) throw refused(`a ${typ} is not a client assertion`);
  const issuer = deps.config.urls.server;
  const atPar = endpoint === `${issuer}/oauth2/par`;
  const audience = atPar ? [issuer] : [...new Set([issuer, `${issuer}/oauth2/token`, endpoint])];
  const payload = await verifiedPayload(deps, client, assertion, audience);
  if (atPar && typeof payload.aud !== "string") {
    throw refused(
      "at the pushed authorization request endpoint, aud must be the issuer identifier, as a string",
    );
  }
  const now = Math.floor(deps.now() / 1000);
  const { exp, iat, jti } = payload;
  if (typeof exp !== "number" || exp > now + MAX_LIFETIME_SECONDS + SKEW_SECONDS) {
    throw refused("client_assertion's exp is more than 5 minutes ahead");
  }
  if (iat !== undefined && (typeof iat !== "number" || iat > now + SKEW_SECONDS)) {
    throw refused("client_assertion was issued in the future (iat)");
  }
  if (typeof jti !== "string" || jti.length === 0 || jti.length > 255) {
    throw refused("client_assertion has no usable jti");
  }
  if (!(await claimJtiOnce(deps, "client-assertion", client.clientId, jti, (exp + SKEW_SECONDS) * 1000))) {
    throw refused("this client_assertion was used before (jti)", "client assertion replayed");
  }
}
