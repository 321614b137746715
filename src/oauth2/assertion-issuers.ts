import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
  type ProtectedHeaderParameters,
} from "jose";
import type { OAuth2ClientRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { onFaultPutBack, type PutBack, putBackWith } from "../lib/put-back";
import { claimJtiOnce, releaseJtiOnce } from "../replay/jti-ledger";
import { OAuth2Error } from "./errors";
import { KeySetUnfetchable, refetchedKeySet, remoteKeySet } from "./remote-key-sets";

/**
 * Assertions from the issuers a client trusts (`trustedIssuers`, set by an admin): the JWT bearer grant (RFC 7523
 * §2.1) and the ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant) that rides on it. This file checks what
 * every such assertion must be — signed by its issuer's keys with an asymmetric algorithm, for this server, unexpired,
 * used once — and leaves what the assertion means (whom it names, for which resource) to the grants.
 */

export type TrustedIssuer = OAuth2ClientRow["trustedIssuers"][number];

/**
 * Asymmetric algorithms only (RFC 8725 §3.1, §3.2): with a symmetric one (HS256) the "key" would be a public key read
 * as a shared secret, which anyone has. `none` is never accepted (jose refuses it outside its unsecured mode).
 */
export const ASSERTION_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

/** The JOSE `typ` of an ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant §3, RFC 8725 §3.11). */
export const ID_JAG_TYP = "oauth-id-jag+jwt";

/**
 * Typed JWTs that are something else and never an authorization grant (RFC 8725 §3.11): an access token (RFC 9068),
 * a DPoP proof, a logout token, a client's own authentication. A token of one kind replayed as another is refused
 * here whatever its signature.
 */
const NOT_GRANTS = new Set(["at+jwt", "dpop+jwt", "logout+jwt", "client-authentication+jwt", "secevent+jwt"]);

/** Clock skew tolerated between the issuer and this server. */
const SKEW_SECONDS = 60;
/**
 * How far ahead an assertion's `exp` may be (RFC 7523 §3 item 4 lets a server refuse one "unreasonably far in the
 * future"): its `jti` is remembered until then, and an assertion that lives long is one that can be stolen and used.
 */
const MAX_LIFETIME_SECONDS = 3600;

const unusable = (what: string) => new OAuth2Error("invalid_grant", `the assertion ${what}`);

/**
 * The issuer's keys: inline, or fetched from its `jwksUri` (remote-key-sets.ts: the outbound-URL policy, a short
 * cache, a refetch for an unknown key id at most every 30 seconds: then undefined). A fetch that fails is one answer
 * that says nothing of how (contract §1); the log has the reason.
 */
async function keysOf(
  deps: Deps,
  trusted: TrustedIssuer,
  afterUnknownKey: boolean,
): Promise<JSONWebKeySet | undefined> {
  if (trusted.jwks) return afterUnknownKey ? undefined : (trusted.jwks as unknown as JSONWebKeySet);
  const uri = trusted.jwksUri;
  if (!uri) throw unusable("comes from an issuer with no keys configured");
  try {
    return afterUnknownKey ? await refetchedKeySet(deps, uri) : (await remoteKeySet(deps, uri)).keys;
  } catch (error) {
    if (!(error instanceof KeySetUnfetchable)) throw error;
    throw new OAuth2Error(
      "invalid_grant",
      "the assertion could not be checked: the issuer's keys could not be fetched",
      undefined,
      `trusted issuer jwksUri ${uri.slice(0, 300)}: ${error.reason}`,
    );
  }
}

/** The claims and header of a JWT, undecoded ones refused. Nothing in them is trusted before the signature is. */
function peek(assertion: string): { header: ProtectedHeaderParameters; claims: JWTPayload } {
  try {
    return { header: decodeProtectedHeader(assertion), claims: decodeJwt(assertion) };
  } catch {
    throw new OAuth2Error("invalid_grant", "the assertion is not a signed JWT");
  }
}

export interface VerifiedAssertion {
  header: ProtectedHeaderParameters;
  claims: JWTPayload & { iss: string; sub: string; jti: string; exp: number };
  /** Whether it is an ID-JAG (`typ: oauth-id-jag+jwt`). */
  idJag: boolean;
  /** The client's entry for the issuer that signed it: whom it may name (`users`, `orgs`). */
  trusted: TrustedIssuer;
  /**
   * The jti's claim, for the grant to put back on a fault after it (`onFaultPutBack`): the 503's retry with the same
   * assertion then redeems it. A refusal keeps it spent.
   */
  claimed: PutBack;
}

/**
 * RFC 7523 §3 for an `assertion` presented by `client`: its `iss` one of the client's trusted issuers (never this
 * server itself: draft-ietf-oauth-identity-assertion-authz-grant §7.3 forbids honouring one's own grants, and an ID
 * token of ours must not come back as a grant); signed by that issuer's key with an asymmetric algorithm; `aud` this
 * server's issuer (or, for a plain JWT bearer assertion, its token endpoint, §3 item 3); `exp` present, past `nbf`
 * and `iat` (with a minute of skew) and at most an hour ahead; a `sub`; a `jti`, accepted once (§3 item 7: recorded
 * in the JTI ledger until `exp`, so a replay — or two requests racing with one assertion — is refused; `claimed`
 * undoes the record when a fault follows).
 */
export async function verifyAssertion(
  deps: Deps,
  client: OAuth2ClientRow,
  assertion: string,
): Promise<VerifiedAssertion> {
  const { config } = deps;
  const { header, claims } = peek(assertion);
  const typ = typeof header.typ === "string" ? header.typ.toLowerCase() : undefined;
  if (typ && NOT_GRANTS.has(typ)) throw unusable(`is a ${typ}, not an authorization grant`);
  const idJag = typ === ID_JAG_TYP || typ === `application/${ID_JAG_TYP}`;
  const issuer = typeof claims.iss === "string" ? claims.iss : undefined;
  if (!issuer) throw unusable("names no issuer (iss)");
  if (issuer === config.urls.server) {
    throw unusable("was issued by this server, which does not honour its own grants");
  }
  const trusted = client.trustedIssuers.find((entry) => entry.issuer === issuer);
  if (!trusted) throw unusable("comes from an issuer this client does not trust");
  // An ID-JAG is for the authorization server (its issuer identifier, draft §3); a plain assertion may name the
  // token endpoint instead (RFC 7523 §3 item 3).
  const audience = idJag ? [config.urls.server] : [config.urls.server, config.urls.auth("/oauth2/token")];
  const verifyWith = async (keys: JSONWebKeySet) =>
    jwtVerify(assertion, createLocalJWKSet(keys), {
      algorithms: ASSERTION_ALGORITHMS,
      issuer,
      audience,
      requiredClaims: ["exp", "sub", "jti"],
      clockTolerance: SKEW_SECONDS,
      currentDate: new Date(deps.now()),
    });
  let payload: JWTPayload;
  try {
    try {
      ({ payload } = await verifyWith((await keysOf(deps, trusted, false))!));
    } catch (error) {
      // A key id the cached set lacks: the issuer may have rotated. Look again (at most every 30 s per URI).
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      const fresh = await keysOf(deps, trusted, true);
      if (!fresh) throw error;
      ({ payload } = await verifyWith(fresh));
    }
  } catch (error) {
    if (error instanceof OAuth2Error) throw error;
    throw unusable(reasonOf(error));
  }
  const now = Math.floor(deps.now() / 1000);
  const { exp, iat, jti, sub } = payload;
  if (typeof exp !== "number" || exp > now + MAX_LIFETIME_SECONDS + SKEW_SECONDS) {
    throw unusable("expires too far in the future (at most an hour)");
  }
  if (iat !== undefined && (typeof iat !== "number" || iat > now + SKEW_SECONDS)) {
    throw unusable("was issued in the future (iat)");
  }
  if (typeof sub !== "string" || sub.length === 0 || sub.length > 255)
    throw unusable("names no subject (sub)");
  if (typeof jti !== "string" || jti.length === 0 || jti.length > 255) throw unusable("has no usable jti");
  const claimed = await claimOnce(deps, issuer, jti, exp);
  return { header, claims: payload as VerifiedAssertion["claims"], idJag, trusted, claimed };
}

/**
 * An assertion's jti claimed in the JTI ledger (RFC 7523 §3 item 7), kept as long as the assertion is accepted: its
 * `exp` and the skew `verifyAssertion` allows past it, plus up to 65 s drawn at random. Those make the row this
 * claim's own: another request's claim of the same assertion has the same key and `exp`, and when this claim's answer
 * is lost (the object reset, or overloaded before it ran) its release must not take that other claim with it — which
 * would let the assertion be redeemed once more. The extra seconds only refuse the jti longer; the assertion itself
 * has expired by then. A fault of the claim itself releases it at once: it may have been recorded.
 */
async function claimOnce(deps: Deps, issuer: string, jti: string, exp: number): Promise<PutBack> {
  const expiresAt = (exp + SKEW_SECONDS) * 1000 + crypto.getRandomValues(new Uint16Array(1))[0]!;
  const claimed: PutBack = {
    putBack: putBackWith("assertion jti", () => releaseJtiOnce(deps, "jwt-bearer", issuer, jti, expiresAt)),
  };
  if (!(await onFaultPutBack(claimed, () => claimJtiOnce(deps, "jwt-bearer", issuer, jti, expiresAt)))) {
    throw new OAuth2Error(
      "invalid_grant",
      "the assertion was used before (jti)",
      undefined,
      "assertion replayed",
    );
  }
  return claimed;
}

/** What was wrong with an assertion jose refused, in words that give nothing away beyond the assertion itself. */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return "is not for this server (aud)";
    if (error.claim === "nbf") return "is not valid yet (nbf)";
    if (error.claim === "iat") return "has an unusable iat";
    return `has a missing or invalid ${error.claim} claim`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "is signed with an algorithm that is not accepted";
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed) {
    return "is not signed by a key of its issuer";
  }
  return "is not a valid signed JWT";
}
