import { eq } from "drizzle-orm";
import { exportJWK, generateKeyPair } from "jose";
import { signingKeys } from "../db/schema";
import { AppError } from "../errors";
import { encrypt } from "../lib/crypto";
import { configuredKids, forgetKeySet, getKeySet, JWT_ALG } from "../lib/keys";
import type { Deps } from "../services/deps";

export interface AdminKey {
  kid: string;
  kty: string;
  alg: string;
  use: string;
  n: string;
  e: string;
  /** Null for a key configured in `AUTH_JWT_PRIVATE_KEYS`: the service does not know when it was made. */
  createdAt: string | null;
  status: "signing" | "published";
  /** `config`: from the secret, listed but not deletable here; `admin`: created by a rotation, stored encrypted. */
  source: "config" | "admin";
}

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
    kid: jwk.kid,
    kty: jwk.kty,
    alg: jwk.alg,
    use: jwk.use,
    n: jwk.n,
    e: jwk.e,
    createdAt: createdAt.has(jwk.kid) ? new Date(createdAt.get(jwk.kid)!).toISOString() : null,
    status: jwk.kid === keys.signingKid ? "signing" : "published",
    source: fromConfig.includes(jwk.kid) ? "config" : "admin",
  }));
}

/**
 * `POST /admin/keys/rotate`: a new RSA-2048 key signs from now on; every earlier key stays published (tokens it
 * signed keep verifying) until it is deleted. The private half is sealed with AES-256-GCM under
 * `AUTH_ENCRYPTION_KEY`. One D1 batch demotes the current stored signer and adds the new one, so two racing
 * rotations leave one signer.
 */
export async function rotateKey(deps: Deps): Promise<AdminKey> {
  const { privateKey } = await generateKeyPair(JWT_ALG, { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = crypto.randomUUID();
  const publicJwk = { kty: "RSA", n: jwk.n!, e: jwk.e! };
  const now = deps.now();
  await deps.db.batch([
    deps.db.update(signingKeys).set({ status: "published" }).where(eq(signingKeys.status, "signing")),
    deps.db.insert(signingKeys).values({
      kid,
      createdAt: now,
      status: "signing",
      privateJwkSealed: await encrypt(deps.config.AUTH_ENCRYPTION_KEY!, JSON.stringify({ ...jwk, kid })),
      publicJwk,
    }),
  ]);
  forgetKeySet(deps.config);
  return {
    kid,
    ...publicJwk,
    alg: JWT_ALG,
    use: "sig",
    createdAt: new Date(now).toISOString(),
    status: "signing",
    source: "admin",
  };
}

/**
 * `DELETE /admin/keys/{kid}`: a retired key goes, and tokens it signed stop verifying (in this isolate at once, in
 * others within the key set's ten-second lifetime, src/lib/keys.ts). The signing key and configured keys stay.
 */
export async function deleteKey(deps: Deps, kid: string): Promise<void> {
  forgetKeySet(deps.config);
  const keys = await getKeySet(deps.config);
  if (!keys.verifyKeys.has(kid)) throw new AppError("not-found", "no key with this kid");
  if (kid === keys.signingKid)
    throw new AppError("invalid-request", "the signing key cannot be deleted: rotate first");
  if ((await configuredKids(deps.config)).includes(kid)) {
    throw new AppError("invalid-request", "this key is configured in AUTH_JWT_PRIVATE_KEYS: remove it there");
  }
  await deps.db.delete(signingKeys).where(eq(signingKeys.kid, kid));
  forgetKeySet(deps.config);
}
