import type { Config } from "../config";
import { whenAborted } from "./abort";
import { BodyTooLarge, readBoundedText } from "./bounded-body";
import { checkOutboundUrl, outboundPolicy } from "./outbound-url";

/**
 * One request to the app's GraphQL API (`HASURA_GRAPHQL_GRAPHQL_URL`, Hasura), for everything that asks it: custom
 * claims (auth/custom-claims-graphql.ts) and storage permissions (storage/hasura-files.ts). As Hasura's clients send
 * it: a JSON `POST` of `{"query", "variables"}`, and only a 200 is an answer. Bounded: `timeoutMs` for the whole
 * exchange (headers and body), `maxBytes` of answer, no redirect followed, and the URL under the outbound-URL policy
 * (contract auth.md §1; loopback only with `AUTH_OUTBOUND_ALLOW_LOCAL` on a local server). Whatever keeps an answer
 * from arriving is one `GraphqlUnavailable` whose reason is for the log; GraphQL `errors` are an answer, handed back
 * for the caller to read (a permission refused is not an outage).
 */

export class GraphqlUnavailable extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "GraphqlUnavailable";
  }
}

export interface GraphqlError {
  message: string;
  /** Hasura's `extensions.code` (`permission-error`, `validation-failed`, …), when there is one. */
  code: string | null;
}

export interface GraphqlAnswer {
  data: Record<string, unknown> | null;
  /** Empty when the request succeeded. */
  errors: GraphqlError[];
}

export interface GraphqlLimits {
  timeoutMs: number;
  maxBytes: number;
}

/**
 * The endpoint's verdict under the outbound-URL policy, once per isolate and configuration (the config object is
 * parsed once per env object): the URL, or why it is refused.
 */
const endpoints = new WeakMap<Config, URL | string>();

function endpointOf(config: Config): URL | string {
  let endpoint = endpoints.get(config);
  if (endpoint === undefined) {
    const verdict = checkOutboundUrl(config.hasura.graphqlUrl ?? "", outboundPolicy(config));
    endpoint = verdict.ok ? verdict.url : `HASURA_GRAPHQL_GRAPHQL_URL is refused: ${verdict.reason}`;
    endpoints.set(config, endpoint);
  }
  return endpoint;
}

function parseAnswer(text: string): GraphqlAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GraphqlUnavailable("the answer is not JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new GraphqlUnavailable("the answer is not a GraphQL response");
  }
  const { data, errors } = body as { data?: unknown; errors?: unknown };
  if (errors !== undefined) {
    if (!Array.isArray(errors) || errors.length === 0) {
      throw new GraphqlUnavailable("the answer's errors are not a list");
    }
    return {
      data: null,
      errors: errors.map((error: { message?: unknown; extensions?: { code?: unknown } } | null) => ({
        message: typeof error?.message === "string" ? error.message.slice(0, 300) : "errors",
        code: typeof error?.extensions?.code === "string" ? error.extensions.code : null,
      })),
    };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new GraphqlUnavailable("the answer has neither data nor errors");
  }
  return { data: data as Record<string, unknown>, errors: [] };
}

/** POSTs `query` with `variables` and `headers`; throws `GraphqlUnavailable` for anything but a GraphQL answer. */
export async function postGraphql(
  deps: { config: Config; outbound: typeof fetch },
  request: { query: string; variables: Record<string, unknown>; headers: Record<string, string> },
  limits: GraphqlLimits,
): Promise<GraphqlAnswer> {
  const url = endpointOf(deps.config);
  if (typeof url === "string") throw new GraphqlUnavailable(url);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const aborted = whenAborted(signal);
  const failed = (what: string, error: unknown) =>
    error instanceof GraphqlUnavailable
      ? error
      : new GraphqlUnavailable(
          signal.aborted
            ? `no answer within ${limits.timeoutMs} ms`
            : `${what}: ${(error as Error)?.name ?? "error"}`,
        );
  let response: Response;
  try {
    response = await Promise.race([
      deps.outbound(url.href, {
        method: "POST",
        redirect: "manual",
        headers: { ...request.headers, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query: request.query, variables: request.variables }),
        signal,
      }),
      aborted,
    ]);
  } catch (error) {
    throw failed("unreachable", error);
  }
  if (response.status !== 200) {
    response.body?.cancel().catch(() => {});
    throw new GraphqlUnavailable(`answered ${response.status}`);
  }
  let text: string;
  try {
    text = await readBoundedText(response, limits.maxBytes, aborted);
  } catch (error) {
    throw error instanceof BodyTooLarge
      ? new GraphqlUnavailable(`answer over ${limits.maxBytes} bytes`)
      : failed("the answer could not be read", error);
  }
  return parseAnswer(text);
}
