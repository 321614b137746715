import { and, desc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import { base64url } from "jose";
import { z } from "zod";
import { type SetupLinkRow, setupLinks } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { randomUuid, sha256Hex, timingSafeEqualString } from "../lib/crypto";

/**
 * Setup links (contract operators.md §5): `<id>.<secret>`, 256 random bits of secret kept only as its SHA-256. The
 * row is found by its id and the secret's hash compared in constant time, so neither a database read nor the timing
 * of an answer helps a guesser. A link serves one organization, until it expires (7 days unless asked otherwise) or
 * is revoked.
 */

export const INTENTS = ["sso", "scim", "domains"] as const;
export type Intent = (typeof INTENTS)[number];

export const DEFAULT_LIFETIME_S = 7 * 24 * 3600;
const MAX_LIFETIME_S = 30 * 24 * 3600;
/** At most this many links stand at once per organization: each is a credential to keep track of. */
const MAX_OPEN_LINKS = 20;
const LAST_USED_GRANULARITY_MS = 60_000;

const ID_SHAPE = /^[0-9a-f-]{36}$/;
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const newLinkSchema = z.strictObject({
  intents: z
    .array(z.enum(INTENTS))
    .min(1)
    .max(3)
    .refine((intents) => new Set(intents).size === intents.length, "each intent once")
    .describe("What the link may set up: `sso`, `scim`, `domains`"),
  expiresIn: z
    .number()
    .int()
    .min(300)
    .max(MAX_LIFETIME_S)
    .optional()
    .describe("Seconds until the link stops working (default 7 days, at most 30)"),
});
export type NewLink = z.infer<typeof newLinkSchema>;

export const createdLinkSchema = z.object({
  id: z.string(),
  url: z.string().describe("The link for the IT admin; shown only in this answer"),
  expiresAt: z.string(),
});

/** A link's secret as its hash (SHA-256 hex). */
const hashOf = (secret: string) => sha256Hex(secret);

export async function createLink(
  deps: Deps,
  orgId: string,
  input: NewLink,
  createdBy: string | null,
): Promise<{ row: SetupLinkRow; token: string }> {
  const now = deps.now();
  const open = await deps.db.$count(
    setupLinks,
    and(eq(setupLinks.orgId, orgId), isNull(setupLinks.revokedAt), gt(setupLinks.expiresAt, now)),
  );
  if (open >= MAX_OPEN_LINKS) {
    throw new AppError("invalid-request", `an organization has at most ${MAX_OPEN_LINKS} open setup links`);
  }
  const id = randomUuid();
  const secret = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
  const row = await deps.db
    .insert(setupLinks)
    .values({
      id,
      orgId,
      secretHash: await hashOf(secret),
      intents: [...input.intents],
      createdBy,
      createdAt: now,
      expiresAt: now + (input.expiresIn ?? DEFAULT_LIFETIME_S) * 1000,
    })
    .returning()
    .get();
  return { row, token: `${id}.${secret}` };
}

/** The URL an IT admin opens: the hosted pages take the token and put it in a cookie (./credential.ts). */
export const linkUrl = (deps: Pick<Deps, "config">, token: string) =>
  `${deps.config.urls.auth("/setup/open")}?link=${encodeURIComponent(token)}`;

/**
 * The link a token names while it stands (not expired, not revoked), else undefined: one answer for a malformed,
 * unknown, wrong, expired or revoked token.
 */
export async function linkOfToken(deps: Pick<Deps, "db" | "now">, token: string | undefined) {
  const [id = "", secret = "", extra] = (token ?? "").split(".");
  if (extra !== undefined || !ID_SHAPE.test(id) || !SECRET_SHAPE.test(secret)) return undefined;
  const row = await deps.db.select().from(setupLinks).where(eq(setupLinks.id, id)).get();
  // Hash and compare even when there is no row: the answer takes as long either way.
  const hash = await hashOf(secret);
  const right = timingSafeEqualString(hash, row?.secretHash ?? "0".repeat(64));
  if (!row || !right || row.revokedAt !== null || row.expiresAt <= deps.now()) return undefined;
  return row;
}

/** Notes the link's use (at most once a minute), for the owner's list. */
export function touchLink(deps: Pick<Deps, "db" | "now" | "background">, id: string) {
  const now = deps.now();
  deps.background(
    deps.db
      .update(setupLinks)
      .set({ lastUsedAt: now })
      .where(
        and(
          eq(setupLinks.id, id),
          or(isNull(setupLinks.lastUsedAt), lt(setupLinks.lastUsedAt, now - LAST_USED_GRANULARITY_MS)),
        ),
      )
      .run()
      .catch(() => {}),
  );
}

export async function listLinks(deps: Pick<Deps, "db">, orgId: string): Promise<SetupLinkRow[]> {
  return deps.db
    .select()
    .from(setupLinks)
    .where(eq(setupLinks.orgId, orgId))
    .orderBy(desc(setupLinks.createdAt), desc(setupLinks.id))
    .limit(100)
    .all();
}

export async function getLink(deps: Pick<Deps, "db">, orgId: string, id: string): Promise<SetupLinkRow> {
  const row = await deps.db
    .select()
    .from(setupLinks)
    .where(and(eq(setupLinks.orgId, orgId), eq(setupLinks.id, id)))
    .get();
  if (!row) throw new AppError("not-found", "no such setup link");
  return row;
}

/** Revokes the link at once (again: the same); 404 for another org's. */
export async function revokeLink(deps: Pick<Deps, "db" | "now">, orgId: string, id: string) {
  const row = await getLink(deps, orgId, id);
  if (row.revokedAt !== null) return row;
  return (
    (await deps.db
      .update(setupLinks)
      .set({ revokedAt: deps.now() })
      .where(and(eq(setupLinks.id, id), isNull(setupLinks.revokedAt)))
      .returning()
      .get()) ?? row
  );
}

/** Adds a domain claimed (`claimed`) or verified (`domains`) through the link to that list, once. */
export async function noteLinkDomain(
  deps: Pick<Deps, "db">,
  id: string,
  list: "claimed" | "domains",
  domain: string,
) {
  const column = list === "claimed" ? setupLinks.claimed : setupLinks.domains;
  await deps.db
    .update(setupLinks)
    .set({ [list]: sql`json_insert(${column}, '$[#]', ${domain})` })
    .where(
      and(
        eq(setupLinks.id, id),
        sql`NOT EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${domain})`,
      ),
    )
    .run();
}

/** Expired or revoked links a month past: nothing left to show. */
export async function sweepLinks(deps: Pick<Deps, "db">, now: number) {
  const before = now - 30 * 24 * 3600 * 1000;
  await deps.db
    .delete(setupLinks)
    .where(or(lt(setupLinks.expiresAt, before), lt(setupLinks.revokedAt, before)))
    .run();
}
