import { and, eq, lte } from "drizzle-orm";
import { vaultConnections } from "../db/schema";
import type { Deps } from "../http/deps";
import { ProviderStepError, refreshConnection } from "../providers";
import { type ConnectionRow, expiryOf, findConnection, openTokens, sealTokens } from "./store";

/**
 * The provider's current access token of a connection, refreshed by the service before it expires (contract
 * operators.md §3). Refreshing is the one write that must happen once: a provider that rotates refresh tokens
 * (RFC 9700 §4.14.2) answers the second use of one with `invalid_grant`, or revokes the whole grant, so two
 * exchanges refreshing at once would lose the connection. The refresher takes a lease first, by one conditional
 * UPDATE on the row's version (DESIGN.md: atomic, never read-then-write); whoever finds it taken uses the token it
 * has while that lasts, or waits briefly for the new one. A failed refresh changes nothing stored.
 */

/** A token with less than this left is refreshed before it is handed out: the client must have time to use it. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
/** The lease of one refresh: longer than the provider call's timeout (10 s, src/providers/client.ts). */
const LEASE_MS = 15_000;
/** Another exchange is refreshing and the old token is about to end: how long to wait for the new one. */
const WAIT_STEP_MS = 200;
const WAIT_STEPS = 60;
/** An old token with less than this left is not worth handing out while another exchange refreshes. */
const STILL_USABLE_MS = 10_000;

export type Current =
  | { ok: true; accessToken: string; expiresAt: number | null; refreshed: boolean; scopes: string[] }
  | { ok: false; reason: "none" | "expired" | "refused" | "service-refused" | "unavailable" };

const usable = (row: ConnectionRow, now: number, margin: number) =>
  row.expiresAt === null || row.expiresAt - now > margin;

async function served(deps: Deps, row: ConnectionRow, refreshed = false): Promise<Current> {
  const tokens = await openTokens(deps, row);
  return {
    ok: true,
    accessToken: tokens.accessToken,
    expiresAt: row.expiresAt,
    refreshed,
    scopes: row.scopes,
  };
}

/** One conditional UPDATE: the lease, if nobody holds one and the row is still the version read. */
async function takeLease(deps: Deps, row: ConnectionRow): Promise<boolean> {
  const now = deps.now();
  const taken = await deps.shards
    .ofUser(row.userId)
    .update(vaultConnections)
    .set({ refreshingUntil: now + LEASE_MS })
    .where(
      and(
        eq(vaultConnections.userId, row.userId),
        eq(vaultConnections.provider, row.provider),
        eq(vaultConnections.version, row.version),
        lte(vaultConnections.refreshingUntil, now),
      ),
    )
    .returning({ version: vaultConnections.version })
    .get();
  return taken !== undefined;
}

/** Gives the lease back untouched (the refresh failed): the stored tokens are what they were. */
async function dropLease(deps: Deps, row: ConnectionRow): Promise<void> {
  await deps.shards
    .ofUser(row.userId)
    .update(vaultConnections)
    .set({ refreshingUntil: 0 })
    .where(
      and(
        eq(vaultConnections.userId, row.userId),
        eq(vaultConnections.provider, row.provider),
        eq(vaultConnections.version, row.version),
      ),
    );
}

/** Someone else holds the lease: wait for the version to move on (or the lease to lapse) and read again. */
async function waitForOther(deps: Deps, row: ConnectionRow): Promise<ConnectionRow | undefined> {
  for (let step = 0; step < WAIT_STEPS; step++) {
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    const now = deps.now();
    const again = await findConnection(deps, row.userId, row.provider);
    if (!again || again.version !== row.version || again.refreshingUntil <= now) return again;
  }
  return row;
}

async function refresh(deps: Deps, row: ConnectionRow): Promise<Current> {
  const tokens = await openTokens(deps, row);
  if (!tokens.refreshToken) {
    await dropLease(deps, row);
    return { ok: false, reason: "expired" };
  }
  let fresh: Awaited<ReturnType<typeof refreshConnection>>;
  try {
    fresh = await refreshConnection(deps, row.provider, tokens.refreshToken);
  } catch (error) {
    await dropLease(deps, row);
    if (!(error instanceof ProviderStepError)) throw error;
    // The service's own credentials refused: every connection of the provider fails alike until the operator acts.
    const level = error.clientRefused ? "error" : "warn";
    console[level](
      JSON.stringify({
        level,
        what: "vault-refresh-failed",
        provider: row.provider,
        detail: error.detail,
      }),
    );
    // Down (no answer, 5xx, 429, `temporarily_unavailable`: `unavailable`, the providers' one decision) is a retry
    // later; the provider refusing this service as its client (`invalid_client`, `unauthorized_client`) is the
    // operator's to fix, not the user's: the connection stays as it is and nobody is told to make it again; any other
    // failure is the provider's "no" to the grant (`invalid_grant`, a 400 naming nothing, an answer that fails its
    // checks), which a retry meets again: the client is told the connection must be made again.
    if (error.unavailable) return { ok: false, reason: "unavailable" };
    return { ok: false, reason: error.clientRefused ? "service-refused" : "refused" };
  }
  const expiresAt = expiryOf(deps, fresh);
  const sealed = await sealTokens(deps, {
    accessToken: fresh.accessToken,
    // RFC 6749 §6: a provider that rotates sends a new one; one that does not keeps the old one valid.
    ...((fresh.refreshToken ?? tokens.refreshToken)
      ? { refreshToken: fresh.refreshToken ?? tokens.refreshToken }
      : {}),
  });
  await deps.shards
    .ofUser(row.userId)
    .update(vaultConnections)
    .set({ sealed, expiresAt, version: row.version + 1, refreshingUntil: 0, updatedAt: deps.now() })
    .where(
      and(
        eq(vaultConnections.userId, row.userId),
        eq(vaultConnections.provider, row.provider),
        eq(vaultConnections.version, row.version),
      ),
    );
  return { ok: true, accessToken: fresh.accessToken, expiresAt, refreshed: true, scopes: row.scopes };
}

/** The connection's access token, refreshed first when less than `REFRESH_MARGIN_MS` of it is left. */
export async function currentToken(deps: Deps, userId: string, provider: string): Promise<Current> {
  let row = await findConnection(deps, userId, provider);
  for (let attempt = 0; attempt < 3 && row; attempt++) {
    const now = deps.now();
    if (usable(row, now, REFRESH_MARGIN_MS)) return served(deps, row);
    if (await takeLease(deps, row)) return refresh(deps, row);
    // Another exchange refreshes now: its old token while it lasts, else the new one once it is written.
    if (usable(row, now, STILL_USABLE_MS)) return served(deps, row);
    const again = await waitForOther(deps, row);
    if (again && again.version === row.version && again.refreshingUntil > deps.now()) {
      return { ok: false, reason: "unavailable" };
    }
    row = again;
  }
  return row ? { ok: false, reason: "unavailable" } : { ok: false, reason: "none" };
}
