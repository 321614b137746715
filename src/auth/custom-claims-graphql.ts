import type { Config } from "../config";
import { whenAborted } from "../lib/abort";
import { BodyTooLarge, readBoundedText } from "../lib/bounded-body";
import { checkOutboundUrl, outboundPolicy } from "../lib/outbound-url";
import { claimsQuery } from "./custom-claims";

/**
 * The one GraphQL request of custom claims from the app's data (contract move-in §4): Nhost's `GetClaims` query
 * (custom-claims.ts) POSTed to `HASURA_GRAPHQL_GRAPHQL_URL` with `x-hasura-admin-secret`, as Nhost's `makeRequest`
 * does (`{"query", "variables": {"id"}}`, JSON in and out, only a 200 is an answer). Bounded: 2 s for the whole
 * exchange, 256 KiB of answer, no redirect followed, and the URL under the outbound-URL policy (contract auth.md §1;
 * loopback only with `AUTH_OUTBOUND_ALLOW_LOCAL` on a local server). Whatever goes wrong is one `ClaimsQueryFailed`
 * whose message is for the log; token-claims.ts decides what the failure means.
 */

export const CLAIMS_QUERY_TIMEOUT_MS = 2_000;
const MAX_ANSWER_BYTES = 256 * 1024;

export class ClaimsQueryFailed extends Error {
  constructor(reason: string) {
    super(`custom claims: ${reason}`);
    this.name = "ClaimsQueryFailed";
  }
}

interface Prepared {
  query: string;
  /** The URL, or why the policy refuses it. */
  url: URL | string;
}

/**
 * What depends on the configuration only, built once per isolate and configuration (the config object is parsed
 * once per env object): the query text and the URL's verdict. No answer is cached: see docs/decisions.md.
 */
const prepared = new WeakMap<Config, Prepared>();

function prepare(config: Config): Prepared {
  let entry = prepared.get(config);
  if (!entry) {
    const verdict = checkOutboundUrl(config.HASURA_GRAPHQL_GRAPHQL_URL ?? "", outboundPolicy(config));
    entry = {
      query: claimsQuery(config.AUTH_JWT_CUSTOM_CLAIMS),
      url: verdict.ok ? verdict.url : `HASURA_GRAPHQL_GRAPHQL_URL is refused: ${verdict.reason}`,
    };
    prepared.set(config, entry);
  }
  return entry;
}

/** The query text this configuration sends (docs, tests). */
export const claimsQueryOf = (config: Config) => prepare(config).query;

/**
 * The `user` object Hasura answers for `userId`, or null when it has no such user (a sign-up the mirror has not
 * written yet: every claim then takes its default). Throws `ClaimsQueryFailed` for anything else: unreachable, too
 * slow, not a 200, not JSON, GraphQL `errors`.
 */
export async function queryUserClaims(
  deps: { config: Config; outbound: typeof fetch },
  userId: string,
): Promise<Record<string, unknown> | null> {
  const { query, url } = prepare(deps.config);
  if (typeof url === "string") throw new ClaimsQueryFailed(url);
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (deps.config.HASURA_GRAPHQL_ADMIN_SECRET) {
    headers["x-hasura-admin-secret"] = deps.config.HASURA_GRAPHQL_ADMIN_SECRET;
  }
  const signal = AbortSignal.timeout(CLAIMS_QUERY_TIMEOUT_MS);
  const aborted = whenAborted(signal);
  const failed = (what: string, error: unknown) =>
    error instanceof ClaimsQueryFailed
      ? error
      : new ClaimsQueryFailed(
          signal.aborted
            ? `no answer within ${CLAIMS_QUERY_TIMEOUT_MS} ms`
            : `${what}: ${(error as Error)?.name ?? "error"}`,
        );
  let response: Response;
  try {
    response = await Promise.race([
      deps.outbound(url.href, {
        method: "POST",
        redirect: "manual",
        headers,
        body: JSON.stringify({ query, variables: { id: userId } }),
        signal,
      }),
      aborted,
    ]);
  } catch (error) {
    throw failed("unreachable", error);
  }
  if (response.status !== 200) {
    response.body?.cancel().catch(() => {});
    throw new ClaimsQueryFailed(`answered ${response.status}`);
  }
  let text: string;
  try {
    text = await readBoundedText(response, MAX_ANSWER_BYTES, aborted).catch((error) => {
      throw error instanceof BodyTooLarge
        ? new ClaimsQueryFailed(`answer over ${MAX_ANSWER_BYTES} bytes`)
        : error;
    });
  } catch (error) {
    throw failed("the answer could not be read", error);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ClaimsQueryFailed("the answer is not JSON");
  }
  const answer = body as { data?: { user?: unknown } | null; errors?: unknown } | null;
  if (answer?.errors !== undefined) {
    const first = Array.isArray(answer.errors) ? (answer.errors[0] as { message?: unknown }) : undefined;
    const message = typeof first?.message === "string" ? first.message.slice(0, 300) : "errors";
    throw new ClaimsQueryFailed(`GraphQL error: ${message}`);
  }
  const user = answer?.data?.user;
  if (user === null) return null;
  if (typeof user !== "object" || user === undefined || Array.isArray(user)) {
    throw new ClaimsQueryFailed("the answer has no data.user object");
  }
  return user as Record<string, unknown>;
}
