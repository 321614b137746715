import { and, asc, eq, isNull, lt, or } from "drizzle-orm";
import { base64url } from "jose";
import { z } from "zod";
import { scimTokens } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { randomUuid, sha256Hex } from "../lib/crypto";

/**
 * SCIM bearer tokens (contract organizations.md §3): 256 random bits, shown once, kept as SHA-256. The lookup is by
 * the hash through a unique index, so the token itself is never compared byte by byte (nothing to time); SHA-256 is
 * enough for a secret of that entropy (no dictionary to try).
 */

/** Marks the token for secret scanners and for people: `scim_` then 43 base64url characters. */
const TOKEN_PREFIX = "scim_";
const TOKEN_SHAPE = /^scim_[A-Za-z0-9_-]{43}$/;
/** How stale `lastUsedAt` may get before a request writes it again: one write a minute at most, not one per call. */
const LAST_USED_GRANULARITY_MS = 60_000;

export const newTokenSchema = z.strictObject({
  name: z.string().max(100).optional().meta({ description: "A label for people (which IdP holds it)." }),
});

export const wireScimTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.string().meta({ format: "date-time" }),
  lastUsedAt: z.string().meta({ format: "date-time" }).nullable(),
  setupLinkId: z
    .string()
    .nullable()
    .meta({ description: "The setup link that made it: it gives no owner or admin role (operators.md §5)." }),
});
export type WireScimToken = z.infer<typeof wireScimTokenSchema>;

export const createdTokenSchema = z.object({
  id: z.string(),
  token: z.string().meta({ description: "The bearer token for the IdP; shown only in this answer." }),
});

function newToken(): string {
  return TOKEN_PREFIX + base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
}

const toWire = (row: typeof scimTokens.$inferSelect): WireScimToken => ({
  id: row.id,
  name: row.name,
  createdAt: new Date(row.createdAt).toISOString(),
  lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt).toISOString(),
  setupLinkId: row.setupLinkId,
});

export async function createScimToken(
  deps: Pick<Deps, "db" | "now">,
  orgId: string,
  name = "",
  /** Made through a setup link: the token gives no `owner` or `admin` role (operators.md §5). */
  setupLinkId: string | null = null,
): Promise<{ id: string; token: string }> {
  const token = newToken();
  const id = randomUuid();
  await deps.db
    .insert(scimTokens)
    .values({ id, orgId, name, tokenHash: await sha256Hex(token), setupLinkId, createdAt: deps.now() })
    .run();
  return { id, token };
}

/** The org's tokens, oldest first, never the tokens themselves (an org holds a handful: no paging needed). */
export async function listScimTokens(deps: Pick<Deps, "db">, orgId: string): Promise<WireScimToken[]> {
  const rows = await deps.db
    .select()
    .from(scimTokens)
    .where(eq(scimTokens.orgId, orgId))
    .orderBy(asc(scimTokens.createdAt), asc(scimTokens.id))
    .limit(500)
    .all();
  return rows.map(toWire);
}

/** Revokes a token at once: the next request with it is 401. 404 for a token of another org. */
export async function deleteScimToken(deps: Pick<Deps, "db">, orgId: string, id: string): Promise<void> {
  const gone = await deps.db
    .delete(scimTokens)
    .where(and(eq(scimTokens.id, id), eq(scimTokens.orgId, orgId)))
    .returning({ id: scimTokens.id })
    .get();
  if (!gone) throw new AppError("not-found", "no such SCIM token");
}

/**
 * The organization a bearer token belongs to, and whether a setup link made it (`limited`: it may not give the
 * `admin` role), or undefined (unknown, revoked, or not a token's shape).
 */
export async function orgOfScimToken(
  deps: Pick<Deps, "db" | "now" | "background">,
  token: string,
): Promise<{ orgId: string; limited: boolean } | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const hash = await sha256Hex(token);
  const row = await deps.db
    .select({ id: scimTokens.id, orgId: scimTokens.orgId, setupLinkId: scimTokens.setupLinkId })
    .from(scimTokens)
    .where(eq(scimTokens.tokenHash, hash))
    .get();
  if (!row) return undefined;
  const now = deps.now();
  deps.background(
    deps.db
      .update(scimTokens)
      .set({ lastUsedAt: now })
      .where(
        and(
          eq(scimTokens.id, row.id),
          or(isNull(scimTokens.lastUsedAt), lt(scimTokens.lastUsedAt, now - LAST_USED_GRANULARITY_MS)),
        ),
      )
      .run()
      .catch(() => {}),
  );
  return { orgId: row.orgId, limited: row.setupLinkId !== null };
}
