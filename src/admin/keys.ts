import { eq, max, sql } from "drizzle-orm";
import { oauth2Clients, signingKeys } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { encrypt } from "../lib/crypto";
import { generatePrivateJwk, publicMembers, type SigningAlgorithm } from "../lib/key-algorithms";
import { configuredKids, forgetKeySet, getKeySet } from "../signing-keys/keys";
import type { AdminKey } from "./wire";

/** `GET /admin/keys`: every published key, the one that signs marked, newest stored keys first. */
export async function listKeys(deps: Deps): Promise<AdminKey[]> {
  forgetKeySet(deps.config);
  const [keys, rows, fromConfig] = await Promise.all([
    getKeySet(deps.config),
    deps.db.select({ kid: signingKeys.kid, createdAt: signingKeys.createdAt }).from(signingKeys).all(),
    configuredKids(deps.config),
  ]);
  const createdAt = new Map(rows.map((row) => [row.kid, row.createdAt]));
  return keys.jwks.map((jwk) => ({
    ...jwk,
    signsIdTokens: jwk.kid === keys.idTokenSigner.kid,
    createdAt: createdAt.has(jwk.kid) ? new Date(createdAt.get(jwk.kid)!).toISOString() : null,
    status: jwk.kid === keys.signer.kid ? "signing" : "published",
    source: fromConfig.includes(jwk.kid) ? "config" : "admin",
  }));
}

/**
 * `POST /admin/keys/rotate`: a new key signs from now on, of the algorithm asked for (RS256 by default; EdDSA or
 * ES256 switch the deployment's access tokens to it, docs/decisions.md "Signing algorithms"); every earlier key stays
 * published (tokens it signed keep verifying, each with its own algorithm) until it is deleted. The private half is
 * sealed with AES-256-GCM under `AUTH_ENCRYPTION_KEY`. One D1 batch demotes the current stored signer and adds the
 * new one, so two racing rotations leave one signer.
 */
export async function rotateKey(deps: Deps, alg: SigningAlgorithm = "RS256"): Promise<AdminKey> {
  const jwk = await generatePrivateJwk(alg);
  const kid = crypto.randomUUID();
  const publicJwk = publicMembers(jwk);
  const now = deps.now();
  await deps.db.batch([
    deps.db.update(signingKeys).set({ status: "published" }).where(eq(signingKeys.status, "signing")),
    deps.db.insert(signingKeys).values({
      kid,
      createdAt: now,
      status: "signing",
      privateJwkSealed: await encrypt(deps.config.secrets.encryptionKey, JSON.stringify({ ...jwk, kid })),
      publicJwk,
    }),
  ]);
  forgetKeySet(deps.config);
  const { idTokenSigner } = await getKeySet(deps.config);
  return {
    kid,
    ...publicJwk,
    alg,
    use: "sig",
    signsIdTokens: idTokenSigner.kid === kid,
    createdAt: new Date(now).toISOString(),
    status: "signing",
    source: "admin",
  };
}

/** Clocks of verifiers may run a little behind ours (jose's default tolerance is none; resource servers vary). */
const CLOCK_SKEW_MS = 60_000;

/**
 * Until when tokens `kid` signed may still be valid: the moment it stopped signing (when the next key was created:
 * a rotation demotes the signer and adds its successor in one batch) plus the longest lifetime any token of this
 * deployment may have: a session's access token, or an OAuth2 access or ID token (up to a client's
 * `accessTokenLifetime`, at most 24 h). A client's lifetime lowered later does not shorten tokens already out, so the
 * largest configured one counts.
 */
async function validUntil(deps: Deps, kid: string): Promise<number> {
  const { db, config } = deps;
  const [[retired], [longest]] = await db.batch([
    db
      .select({ at: sql<number | null>`min(${signingKeys.createdAt})` })
      .from(signingKeys)
      .where(
        sql`${signingKeys.createdAt} > (SELECT ${signingKeys.createdAt} FROM ${signingKeys} WHERE ${signingKeys.kid} = ${kid})`,
      ),
    db.select({ seconds: max(oauth2Clients.accessTokenLifetime) }).from(oauth2Clients),
  ]);
  const lifetimeSeconds = Math.max(
    config.tokens.accessTtl,
    config.oauth2.accessTokenTtl,
    longest?.seconds ?? 0,
  );
  return (retired?.at ?? deps.now()) + lifetimeSeconds * 1000 + CLOCK_SKEW_MS;
}

/**
 * `DELETE /admin/keys/{kid}`: a retired key goes, and tokens it signed stop verifying (in this isolate at once, in
 * others within the key set's ten-second lifetime, src/signing-keys/keys.ts). The signing key and configured keys stay. A key
 * whose tokens may still be valid is refused (their users would be signed out, OAuth2 clients' tokens rejected),
 * unless `force`: after a leak, ending those tokens now is the point.
 */
export async function deleteKey(deps: Deps, kid: string, options: { force?: boolean } = {}): Promise<void> {
  forgetKeySet(deps.config);
  const keys = await getKeySet(deps.config);
  if (!keys.verifyKeys.has(kid)) throw new AppError("not-found", "no key with this kid");
  if (kid === keys.signer.kid)
    throw new AppError("invalid-request", "the signing key cannot be deleted: rotate first");
  if (kid === keys.idTokenSigner.kid) {
    throw new AppError(
      "invalid-request",
      "this key signs ID tokens: relying parties expect RS256, so while another algorithm signs access tokens the newest RS256 key stays",
    );
  }
  if ((await configuredKids(deps.config)).includes(kid)) {
    throw new AppError("invalid-request", "this key is configured in AUTH_JWT_PRIVATE_KEYS: remove it there");
  }
  if (!options.force) {
    const until = await validUntil(deps, kid);
    if (deps.now() < until) {
      throw new AppError(
        "invalid-request",
        `tokens this key signed may be valid until ${new Date(until).toISOString()}: delete it after then, or now with force (after a leak: those tokens stop working at once)`,
      );
    }
  }
  await deps.db.delete(signingKeys).where(eq(signingKeys.kid, kid));
  forgetKeySet(deps.config);
}
