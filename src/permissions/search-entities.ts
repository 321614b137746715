import { and, asc, eq, gt, isNull } from "drizzle-orm";
import { base64url } from "jose";
import { authzRelationships, users } from "../db/schema";
import { evaluateMany, type PermissionDeps } from "./evaluate";
import { checkEvaluation, PermissionRequestError, SUBJECT_TYPE } from "./request";

/**
 * AuthZEN's Subject Search and Resource Search (§"Subject Search API", §"Resource Search API"): the candidates the
 * service knows, each evaluated exactly as an evaluation request would be, the permitted ones answered, page by page.
 * Cedar cannot be asked "who may" directly, so the answer is only as whole as the candidates, and they are named:
 * - subjects: every user of the service (type `user`), enabled and not deleted, shard by shard in id order;
 * - resources: the resources of the asked type that have a stored relationship (the service knows of no other app
 *   resource; docs/permissions.md says so).
 * A page scans at most SCAN candidates, whatever the `limit`, so a request's cost is bounded (at most SCAN
 * evaluations); a page may then hold fewer results than asked, even none, with a `next_token` to go on.
 */

const SCAN = 100;
const DEFAULT_LIMIT = 50;

interface Cursor {
  /** The shard being scanned (subjects), 0 for resources. */
  s: number;
  /** The last candidate id scanned. */
  a: string;
}

// Base64url of the cursor's UTF-8: an id may be any text (`btoa` takes Latin-1 only, and threw on `文档-1`).
const encode = (cursor: Cursor) => base64url.encode(JSON.stringify(cursor));

function decode(token: unknown): Cursor {
  if (token === undefined || token === null || token === "") return { s: 0, a: "" };
  try {
    if (typeof token !== "string" || token.length > 1024) throw new Error();
    const value = JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(base64url.decode(token)),
    ) as Cursor;
    if (!Number.isInteger(value.s) || value.s < 0 || typeof value.a !== "string") throw new Error();
    return value;
  } catch {
    throw new PermissionRequestError("page.token is not a token this PDP gave");
  }
}

const objectOf = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

function pageOf(body: Record<string, unknown>): { cursor: Cursor; limit: number } {
  const page = objectOf(body.page);
  const limit = page.limit === undefined ? DEFAULT_LIMIT : page.limit;
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 1000) {
    throw new PermissionRequestError("page.limit must be a whole number from 1 to 1000");
  }
  return { cursor: decode(page.token), limit: limit as number };
}

const answer = (results: { type: string; id: string }[], next?: Cursor) => ({
  results,
  ...(next ? { page: { next_token: encode(next) } } : {}),
});

/** Which users may do the action on the resource. */
export async function searchSubjects(deps: PermissionDeps, body: Record<string, unknown>) {
  const subject = objectOf(body.subject);
  if (subject.type !== SUBJECT_TYPE) {
    throw new PermissionRequestError(
      `subject.type must be "${SUBJECT_TYPE}": the subjects searched are the service's users`,
    );
  }
  const { cursor, limit } = pageOf(body);
  const request = (id: string) => ({
    subject: { type: SUBJECT_TYPE, id },
    action: body.action,
    resource: body.resource,
    context: body.context,
  });
  // The request is checked once before any candidate is read (a bad one is refused as the evaluation API refuses it).
  checkEvaluation(request("search"));
  const results: { type: string; id: string }[] = [];
  let { s: shard, a: after } = cursor;
  let scanned = 0;
  while (shard < deps.shards.count && scanned < SCAN && results.length < limit) {
    const ids = (
      await deps.shards.all[shard]!.select({ id: users.id })
        .from(users)
        .where(and(gt(users.id, after), eq(users.disabled, false), isNull(users.deletedAt)))
        .orderBy(asc(users.id))
        .limit(Math.min(SCAN - scanned, limit - results.length))
        .all()
    ).map((row) => row.id);
    scanned += ids.length;
    const decisions = ids.length ? await evaluateMany(deps, ids.map(request)) : [];
    ids.forEach((id, index) => {
      if (decisions[index]?.decision) results.push({ type: SUBJECT_TYPE, id });
    });
    if (ids.length === 0) [shard, after] = [shard + 1, ""];
    else after = ids.at(-1)!;
  }
  return answer(results, shard < deps.shards.count ? { s: shard, a: after } : undefined);
}

/** Which resources of a type the user may do the action on, among those with a stored relationship. */
export async function searchResources(deps: PermissionDeps, body: Record<string, unknown>) {
  const resource = objectOf(body.resource);
  if (typeof resource.type !== "string") throw new PermissionRequestError("missing resource.type");
  const type = resource.type;
  const { cursor, limit } = pageOf(body);
  const request = (id: string) => ({
    subject: body.subject,
    action: body.action,
    resource: { type, id },
    context: body.context,
  });
  checkEvaluation(request("search"));
  const size = Math.min(SCAN, limit);
  const ids = (
    await deps.db
      .selectDistinct({ id: authzRelationships.resourceId })
      .from(authzRelationships)
      .where(and(eq(authzRelationships.resourceType, type), gt(authzRelationships.resourceId, cursor.a)))
      .orderBy(asc(authzRelationships.resourceId))
      .limit(size)
      .all()
  ).map((row) => row.id);
  const decisions = ids.length ? await evaluateMany(deps, ids.map(request)) : [];
  const results = ids.filter((_, index) => decisions[index]?.decision).map((id) => ({ type, id }));
  return answer(results, ids.length === size ? { s: 0, a: ids.at(-1)! } : undefined);
}
