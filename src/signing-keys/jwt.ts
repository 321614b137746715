import { errors, type JWTPayload, jwtVerify, SignJWT } from "jose";
import type { Config } from "../config";
import { sha256Hex } from "../lib/crypto";
import type { IMPORTED, ImportedSystem } from "../lib/imported-tokens";
import { SIGNING_ALGORITHMS } from "../lib/key-algorithms";
import { getKeySet, keySetGeneration } from "./keys";
import { recallVerified, rememberVerified } from "./verified-tokens";

export const HASURA_NAMESPACE = "https://hasura.io/jwt/claims";

export type HasuraClaims = Record<string, string | string[] | number | boolean | null | object>;

export interface AccessTokenPayload extends JWTPayload {
  sub: string;
  sid?: string;
  /** The organization the session acts in (contract organizations.md §1), for consumers other than Hasura. */
  org_id?: string;
  /** The DPoP key (RFC 9449 §6.1) the session is bound to: the token is sent as `DPoP` with a proof by that key. */
  cnf?: { jkt: string };
  /** An impersonation's (contract operators.md §1): who acts for `sub` (RFC 8693 §4.1). */
  act?: { sub: string };
  /** Authentication methods (RFC 8176): an impersonation's tokens carry `imp`. */
  amr?: string[];
  /** Set only on an old system's token accepted after a move (src/http/imported-tokens.ts): it reads only. */
  [IMPORTED]?: ImportedSystem;
  iat: number;
  exp: number;
  [HASURA_NAMESPACE]: HasuraClaims;
}

/**
 * `sessionId` becomes the `sid` claim (OpenID Connect's session id), so "the caller's session" is knowable.
 * `topLevel`: further top-level claims (`org_id`); they can't replace the registered ones set here. `dpopJkt`: the
 * DPoP key the session is bound to, as `cnf.jkt` (RFC 9449 §6.1).
 */
export async function signAccessToken(
  config: Config,
  subject: string,
  hasuraClaims: HasuraClaims,
  now: number,
  sessionId?: string,
  topLevel: Record<string, string> = {},
  dpopJkt?: string | null,
  impersonation?: Impersonation | null,
): Promise<string> {
  const { signer } = await getKeySet(config);
  const iat = Math.floor(now / 1000);
  return new SignJWT({
    ...topLevel,
    [HASURA_NAMESPACE]: hasuraClaims,
    ...(sessionId ? { sid: sessionId } : {}),
    ...(dpopJkt ? { cnf: { jkt: dpopJkt } } : {}),
    ...(impersonation ? actClaims(impersonation) : {}),
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: "JWT" })
    .setSubject(subject)
    .setIssuer(config.urls.server)
    .setIssuedAt(iat)
    .setExpirationTime(expiryOf(iat, config.tokens.accessTtl, impersonation))
    .sign(signer.key);
}

/** An impersonated session (contract operators.md §1): who acts, and when it ends (ms). */
export interface Impersonation {
  actor: string;
  endsAt: number;
}

/** The claims saying who acts (RFC 8693 §4.1 `act`) and how (`amr` `imp`), for every token of an impersonation. */
export const actClaims = (impersonation: Impersonation) => ({
  act: { sub: impersonation.actor },
  amr: ["imp"],
});

/** A token's `exp` (seconds): `ttl` after `iat`, never past the impersonation's end. */
export const expiryOf = (iat: number, ttl: number, impersonation?: Impersonation | null) =>
  impersonation ? Math.min(iat + ttl, Math.floor(impersonation.endsAt / 1000)) : iat + ttl;

/**
 * The key set could not be read (D1 unreachable on an isolate that has no copy yet): no verdict on the token. A caller
 * that answers "not a token" for every failure lets this one through (`rethrowUnreadable`), so the request is a 503,
 * not a 401 that would make a client sign its user out during a database blip.
 */
class KeySetUnreadable extends Error {
  constructor(readonly reason: unknown) {
    super("the signing key set could not be read");
  }
}

const readKeySet = (config: Config, options?: { unknownKid?: boolean }) =>
  getKeySet(config, options).catch((error: unknown) => {
    throw new KeySetUnreadable(error);
  });

/**
 * One of our verification keys by its `kid`. A kid this isolate has not seen may have been created by a rotation in
 * another one: looked for again, once (the key set's unknown-kid read). Throws `KeySetUnreadable` when D1 cannot say.
 */
export async function ownVerifyKey(config: Config, kid: string) {
  return (
    (await readKeySet(config)).verifyKeys.get(kid) ??
    (await readKeySet(config, { unknownKid: true })).verifyKeys.get(kid)
  );
}

/** In a catch that turns every failed verification into "not a token": the key set's failure goes on, as it came. */
export function rethrowUnreadable(error: unknown): void {
  if (error instanceof KeySetUnreadable) throw error.reason;
}

/**
 * Verifies a JWT this service signed: the key chosen by `kid` among our own keys, and the token's `alg` exactly that
 * key's (no `alg` confusion, RFC 8725 §3.1: during a switch of algorithm, tokens of the old one verify with the old
 * keys and only with them), our issuer, the expected `typ` header, an unexpired `exp`. Throws for anything else.
 * A token verified a moment ago in this isolate is not verified again (src/signing-keys/verified-tokens.ts).
 */
export async function verifyOwnJwt(
  config: Config,
  token: string,
  expect: { typ: string; requiredClaims: string[]; issuer?: string; audience?: string },
): Promise<JWTPayload> {
  const [hash, generation, as] = [await sha256Hex(token), keySetGeneration(), verifiedAs(expect)];
  const recalled = recallVerified(config, hash, as, generation, Date.now());
  if (recalled) return recalled;
  const { payload } = await jwtVerify(
    token,
    async (header) => {
      if (!header.kid) throw new errors.JWKSNoMatchingKey();
      const found = await ownVerifyKey(config, header.kid);
      if (!found || found.alg !== header.alg) throw new errors.JWKSNoMatchingKey();
      return found.key;
    },
    { algorithms: [...SIGNING_ALGORITHMS], ...expect, issuer: expect.issuer ?? config.urls.server },
  );
  rememberVerified(config, hash, as, generation, payload, Date.now());
  return payload;
}

const verifiedAs = (expect: { typ: string; requiredClaims: string[]; issuer?: string; audience?: string }) =>
  `${expect.issuer ?? ""} ${expect.audience ?? ""} ${expect.typ} ${expect.requiredClaims.join(",")}`;

/**
 * Verifies a session access token of this service (contract §5.1). Returns null for anything that is not one,
 * including OAuth2 access tokens (`at+jwt`, with an `aud`, src/oauth2/tokens.ts): they carry Hasura claims for a
 * GraphQL engine when scope `graphql` was granted, but a third-party client must never use them on this API. An old
 * system's tokens are not this service's: src/http/imported-tokens.ts adds them, under the cut-over's rules.
 */
export async function verifyAccessToken(config: Config, token: string): Promise<AccessTokenPayload | null> {
  let payload: JWTPayload;
  try {
    payload = await verifyOwnJwt(config, token, { typ: "JWT", requiredClaims: ["sub", "exp", "iat"] });
  } catch (error) {
    rethrowUnreadable(error);
    return null;
  }
  const claims = payload[HASURA_NAMESPACE];
  if (typeof claims !== "object" || claims === null || payload.aud !== undefined) return null;
  // A `cnf` we did not write (not one key thumbprint) binds to nothing we could check: no token.
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  if (cnf !== undefined && (typeof cnf?.jkt !== "string" || Object.keys(cnf).length !== 1)) return null;
  return payload as AccessTokenPayload;
}
