import type { Config } from "../config";
import { GraphqlUnavailable, postGraphql } from "../lib/graphql-request";
import { claimsQuery } from "./custom-claims";

/**
 * The one GraphQL request of custom claims from the app's data (contract move-in §4): Nhost's `GetClaims` query
 * (custom-claims.ts) POSTed to `HASURA_GRAPHQL_GRAPHQL_URL` with `x-hasura-admin-secret`, as Nhost's `makeRequest`
 * does (`{"query", "variables": {"id"}}`, JSON in and out, only a 200 is an answer). Bounded by lib/graphql-request.ts:
 * 2 s for the whole exchange, 256 KiB of answer, no redirect followed, the URL under the outbound-URL policy. Whatever
 * goes wrong is one `ClaimsQueryFailed` whose message is for the log; token-claims.ts decides what the failure means.
 */

export const CLAIMS_QUERY_TIMEOUT_MS = 2_000;
const MAX_ANSWER_BYTES = 256 * 1024;

export class ClaimsQueryFailed extends Error {
  constructor(reason: string) {
    super(`custom claims: ${reason}`);
    this.name = "ClaimsQueryFailed";
  }
}

/**
 * The query text, built once per isolate and configuration (the config object is parsed once per env object). No
 * answer is cached: see docs/decisions.md.
 */
const queries = new WeakMap<Config, string>();

/** The query text this configuration sends (docs, tests). */
export function claimsQueryOf(config: Config): string {
  let query = queries.get(config);
  if (query === undefined) {
    query = claimsQuery(config.tokens.customClaims);
    queries.set(config, query);
  }
  return query;
}

/**
 * The `user` object Hasura answers for `userId`, or null when it has no such user (a sign-up the mirror has not
 * written yet: every claim then takes its default). Throws `ClaimsQueryFailed` for anything else: unreachable, too
 * slow, not a 200, not JSON, GraphQL `errors`.
 */
export async function queryUserClaims(
  deps: { config: Config; outbound: typeof fetch },
  userId: string,
): Promise<Record<string, unknown> | null> {
  const headers: Record<string, string> = {};
  if (deps.config.hasura.adminSecret) {
    headers["x-hasura-admin-secret"] = deps.config.hasura.adminSecret;
  }
  let answer: Awaited<ReturnType<typeof postGraphql>>;
  try {
    answer = await postGraphql(
      deps,
      { query: claimsQueryOf(deps.config), variables: { id: userId }, headers },
      { timeoutMs: CLAIMS_QUERY_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES },
    );
  } catch (error) {
    throw error instanceof GraphqlUnavailable ? new ClaimsQueryFailed(error.reason) : error;
  }
  const [first] = answer.errors;
  if (first) throw new ClaimsQueryFailed(`GraphQL error: ${first.message}`);
  const user = answer.data?.user;
  if (user === null) return null;
  if (typeof user !== "object" || user === undefined || Array.isArray(user)) {
    throw new ClaimsQueryFailed("the answer has no data.user object");
  }
  return user as Record<string, unknown>;
}
