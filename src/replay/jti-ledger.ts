import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { sha256Hex } from "../lib/crypto";

/**
 * The JWT ids (`jti`) this server has accepted once and must refuse again until they expire (contract §12): DPoP
 * proofs (RFC 9449 §11.1), client assertions (`private_key_jwt`, RFC 7523 §3 item 7) and the assertions of the JWT
 * bearer and ID-JAG grants. Each id is kept in one of 4096 objects named by the first three hex digits of its key's
 * SHA-256, for as long as the JWT it came in could still be presented; `claim` checks and records in one synchronous
 * call, so of two requests racing with the same proof exactly one wins; `release` undoes a claim that a fault followed
 * (the JWT bearer grant's assertions). An alarm deletes the ids past their time.
 */
export class JtiLedger extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS used (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID",
    );
  }

  /** True the first time `key` is claimed (until `expiresAt`, ms); false while an earlier claim stands. */
  claim(key: string, expiresAt: number, now: number): boolean {
    const sql = this.ctx.storage.sql;
    const held = sql
      .exec<{ expires_at: number }>("SELECT expires_at FROM used WHERE key = ?", key)
      .toArray()[0];
    if (held && held.expires_at > now) return false;
    sql.exec("INSERT OR REPLACE INTO used (key, expires_at) VALUES (?, ?)", key, expiresAt);
    // Output gates hold the answer until the alarm is stored; one alarm sweeps every expired id.
    void this.ctx.storage.getAlarm().then((alarm) => {
      if (alarm === null || alarm > expiresAt) return this.ctx.storage.setAlarm(expiresAt);
    });
    return true;
  }

  /**
   * Undoes a claim that a fault followed (the 503 its client retries with the same JWT): the row goes only while it is
   * that claim's, the same `key` AND the same `expiresAt`, so a later claim of the key (after this one expired) stays.
   * The alarm set for it finds nothing to sweep, or the ids of others.
   */
  release(key: string, expiresAt: number): void {
    this.ctx.storage.sql.exec("DELETE FROM used WHERE key = ? AND expires_at = ?", key, expiresAt);
  }

  override async alarm(): Promise<void> {
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM used WHERE expires_at <= ?", Date.now());
    const next = sql.exec<{ next: number | null }>("SELECT min(expires_at) AS next FROM used").one().next;
    // Not `deleteAll()` when none is left: it would drop the table under this very instance, whose constructor
    // will not run again, and its next `claim` would fail. An empty table costs nothing.
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }
}

/**
 * What a `jti` was accepted for: ids of different kinds (and issuers) never collide. `app-request`: a hosted page's
 * pending request of a first-party app (src/oauth2/app-requests.ts), completed once; its id stands for the jti.
 */
export type JtiPurpose = "dpop" | "client-assertion" | "jwt-bearer" | "app-request";

type LedgerDeps = { env: Pick<Env, "JTI_LEDGERS"> };

/** A jti's key (its kind and issuer in it) and the ledger object that keeps it. */
async function ledgerOf(deps: LedgerDeps, purpose: JtiPurpose, issuer: string, jti: string) {
  const key = await sha256Hex(`${purpose}\n${issuer}\n${jti}`);
  const ledger = deps.env.JTI_LEDGERS.get(deps.env.JTI_LEDGERS.idFromName(`jti:${key.slice(0, 3)}`));
  return { key, ledger };
}

/**
 * Records `jti` of `issuer` (a DPoP key's thumbprint, a client id, an assertion's issuer) as used until `expiresAt`
 * (ms); false when it was used before. A failing object throws, which the app answers with 503: a proof is never
 * accepted unrecorded.
 */
export async function claimJtiOnce(
  deps: LedgerDeps & { now: () => number },
  purpose: JtiPurpose,
  issuer: string,
  jti: string,
  expiresAt: number,
): Promise<boolean> {
  const { key, ledger } = await ledgerOf(deps, purpose, issuer, jti);
  return ledger.claim(key, expiresAt, deps.now());
}

/**
 * Undoes `claimJtiOnce(…, expiresAt)` when a fault followed it (whether the claim ran or not): the JWT may be presented
 * again. Only a claim recorded with this very `expiresAt` goes (`JtiLedger.release`). Throws when the object fails.
 */
export async function releaseJtiOnce(
  deps: LedgerDeps,
  purpose: JtiPurpose,
  issuer: string,
  jti: string,
  expiresAt: number,
): Promise<void> {
  const { key, ledger } = await ledgerOf(deps, purpose, issuer, jti);
  await ledger.release(key, expiresAt);
}
