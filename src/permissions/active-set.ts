import type { Deps } from "../http/deps";
import { type ActiveSet, latestVersion, loadActiveSet } from "./store";

/**
 * How long an isolate trusts what it read of the permissions' data before it asks again: the policy set (by its
 * version), a subject's attributes and roles, a resource's relationships. A change written at time T is seen by every
 * isolate's first check after T + FRESHNESS_MS at the latest (contract platform.md §2: "within one second
 * everywhere"), and a busy isolate asks D1 about the policy set at most once per FRESHNESS_MS, whatever its traffic.
 */
export const FRESHNESS_MS = 1000;

/** Whether a value read at `at` (the time before its read began) may still be used at `now`. */
export const stillFresh = (at: number, now: number) => now >= at && now - at < FRESHNESS_MS;

/**
 * This isolate's copy of the set in force and when its version was last compared with D1's. Settled plain data
 * only (DESIGN.md: no in-flight I/O is shared between requests).
 */
let cached: { set: ActiveSet; checkedAt: number } | null = null;

/**
 * The schema and policy set in force. Within FRESHNESS_MS of the last comparison: no D1 query. Past it: one read of
 * the newest version (the end of a primary key), and only when it moved, one read of the texts.
 */
export async function activeSet(deps: Pick<Deps, "db" | "now">): Promise<ActiveSet> {
  const now = deps.now();
  if (cached && stillFresh(cached.checkedAt, now)) return cached.set;
  const version = await latestVersion(deps.db);
  const set = cached && cached.set.version === version ? cached.set : await loadActiveSet(deps.db);
  cached = { set, checkedAt: now };
  return set;
}

/** After this isolate wrote a new version: it sees its own change at once (others within FRESHNESS_MS). */
export function rememberActiveSet(set: ActiveSet, now: number): void {
  cached = { set, checkedAt: now };
}
