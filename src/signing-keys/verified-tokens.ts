import type { JWTPayload } from "jose";
import type { Config } from "../config";

/**
 * Our own JWTs this isolate verified a moment ago, so the session check does not verify the same access token
 * again on every request (an app sends the same one for its whole 15-minute life). Verifying was ~10 % of a session
 * check's CPU (signature, base64, claim checks: docs/performance.md).
 *
 * - Kept by the SHA-256 of the token: an entry matches only the very bytes that verified, and no token is held.
 * - Trusted for at most `TRUST_MS`, the key set's own lifetime in an isolate (src/signing-keys/keys.ts): a key deleted
 *   elsewhere stops verifying here as soon as it did before; a key deleted or rotated in this isolate forgets every
 *   entry at once (`keySetGeneration`); never past the token's `exp`.
 * - Only settled data (a frozen payload) is shared across requests.
 */
const TRUST_MS = 10_000;
const MAX_ENTRIES = 2_000;

interface Entry {
  payload: JWTPayload;
  /** What the token was verified as: its `typ` and required claims. */
  as: string;
  until: number;
  generation: number;
}

const byConfig = new WeakMap<Config, Map<string, Entry>>();

function entriesOf(config: Config): Map<string, Entry> {
  let entries = byConfig.get(config);
  if (!entries) {
    entries = new Map();
    byConfig.set(config, entries);
  }
  return entries;
}

export function recallVerified(
  config: Config,
  hash: string,
  as: string,
  generation: number,
  now: number,
): JWTPayload | undefined {
  const entry = byConfig.get(config)?.get(hash);
  if (!entry) return undefined;
  if (entry.until <= now || entry.generation !== generation || entry.as !== as) {
    byConfig.get(config)!.delete(hash);
    return undefined;
  }
  return entry.payload;
}

export function rememberVerified(
  config: Config,
  hash: string,
  as: string,
  generation: number,
  payload: JWTPayload,
  now: number,
): void {
  const entries = entriesOf(config);
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  const until = Math.min(now + TRUST_MS, (payload.exp ?? 0) * 1000);
  entries.set(hash, { payload: deepFreeze(payload), as, until, generation });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
