import type { CryptoKey } from "jose";
import type { Config } from "../config";
import { decrypt } from "../lib/crypto";
import { importKey } from "../lib/key-algorithms";
import { settledMemo } from "../lib/settled";

/**
 * The D1 store of signing keys: the keys rotated in through the admin API (`signing_keys`, src/admin/keys.ts), their
 * private halves sealed with `AUTH_ENCRYPTION_KEY`, as the key set reads them (keys.ts). The store is the
 * deployment's D1, bound to its configuration once by the Worker's entry point (`useKeyStore`); without one (unit
 * tests of signing) only the configured keys exist.
 */
const keyStores = new WeakMap<Config, D1Database>();

export function useKeyStore(config: Config, db: D1Database): void {
  keyStores.set(config, db);
}

/** Stored keys imported once per kid (a kid's key never changes). */
const importedPublic = settledMemo<string, CryptoKey>(256);
const importedSigning = settledMemo<string, CryptoKey>(256);

export function publicKeyOf(row: StoredKeyRow): Promise<CryptoKey> {
  return importedPublic.get(row.kid, () => importKey(JSON.parse(row.public_jwk)));
}

export function signingKeyOf(config: Config, row: StoredKeyRow): Promise<CryptoKey> {
  return importedSigning.get(row.kid, async () =>
    importKey(JSON.parse(await decrypt(config.secrets.encryptionKey, row.private_jwk_sealed))),
  );
}

export interface StoredKeyRow {
  kid: string;
  status: "signing" | "published";
  created_at: number;
  private_jwk_sealed: string;
  public_jwk: string;
}

/**
 * `nearby`: a read replica may answer (the periodic re-read of a key set this isolate has: a key rotated elsewhere
 * shows up within the replica's lag on top of keys.ts's key set lifetime (`config.keySetTtlMs`)). The first read, the one after this isolate's own
 * rotation and the one for a kid not seen yet ask the primary, which has every key already signing somewhere.
 */
export async function storedKeys(config: Config, nearby: boolean): Promise<StoredKeyRow[]> {
  const db = keyStores.get(config);
  if (!db) return [];
  const { results } = await (nearby ? db.withSession("first-unconstrained") : db)
    .prepare(
      "SELECT kid, status, created_at, private_jwk_sealed, public_jwk FROM signing_keys ORDER BY created_at DESC",
    )
    .all<StoredKeyRow>();
  return results;
}
