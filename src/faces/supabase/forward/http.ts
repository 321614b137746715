import type { Context } from "hono";
import type { AppEnv } from "../../../http/app-env";
import type { UpstreamRole } from "./exchange";
import { upstreamToken } from "./exchange";
import { cloudflareFailure, fetchUpstream, UpstreamFailed } from "./upstream-fetch";

/**
 * An HTTP data call forwarded (contract supabase.md §4): the same method, path, query and body, streamed both ways;
 * the caller's credentials replaced by the upstream's. What the caller sent to this service stays here: its cookies
 * (the service's sessions), its `Authorization` and `apikey` (the face's keys and tokens), the admin secret, a DPoP
 * proof, the hop-by-hop headers of its connection (RFC 9110 §7.6.1), and what Cloudflare added about it.
 */

const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  "host",
  "content-length",
  "cookie",
  "authorization",
  "apikey",
  "x-hasura-admin-secret",
  "dpop",
  "x-real-ip",
]);

/**
 * Of the upstream's answer, neither the hop-by-hop headers nor what would act on this service's own origin: cookies
 * it would set here, and CORS headers (this face's own CORS decides). The length goes too: the runtime decodes a
 * compressed body and encodes it again as it passes.
 */
const NOT_RETURNED = new Set([...HOP_BY_HOP, "content-length", "set-cookie"]);

/** The names a `Connection` header lists are hop-by-hop too (RFC 9110 §7.6.1). */
const connectionNames = (headers: Headers) =>
  new Set(
    (headers.get("connection") ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );

export function outgoingHeaders(incoming: Headers): Headers {
  const named = connectionNames(incoming);
  const headers = new Headers();
  for (const [name, value] of incoming) {
    if (
      NOT_FORWARDED.has(name) ||
      named.has(name) ||
      name.startsWith("cf-") ||
      name.startsWith("x-forwarded-")
    )
      continue;
    headers.append(name, value);
  }
  return headers;
}

function returnedHeaders(answer: Headers): Headers {
  const named = connectionNames(answer);
  const headers = new Headers();
  for (const [name, value] of answer) {
    if (NOT_RETURNED.has(name) || named.has(name) || name.startsWith("access-control-")) continue;
    headers.append(name, value);
  }
  return headers;
}

/** The upstream URL of `path`, the caller's query kept but its `apikey` (the face's key) left out. */
export function upstreamUrl(base: string, path: string, search: URLSearchParams): URL {
  const url = new URL(`${base}${path}`);
  for (const [name, value] of search) if (name !== "apikey") url.searchParams.append(name, value);
  return url;
}

export async function forwardHttp(c: Context<AppEnv>, path: string, caller: UpstreamRole): Promise<Response> {
  const { config, deps } = c.var;
  const upstream = config.supabase.upstream!;
  const { token } = await upstreamToken(upstream, caller, deps.now());
  const headers = outgoingHeaders(c.req.raw.headers);
  headers.set("authorization", `Bearer ${token}`);
  if (upstream.anonKey) headers.set("apikey", upstream.anonKey);
  const method = c.req.method;
  const url = upstreamUrl(upstream.url, path, new URL(c.req.url).searchParams);
  const answer = await fetchUpstream(deps.outbound, url.href, {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : c.req.raw.body,
    // A redirect is the upstream's answer, handed back as it is: following it would send the token elsewhere.
    redirect: "manual",
  });
  const failure = cloudflareFailure(answer.status);
  if (failure) {
    answer.body?.cancel().catch(() => {});
    throw new UpstreamFailed(failure, `Cloudflare answered ${answer.status}`);
  }
  return new Response(answer.body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: returnedHeaders(answer.headers),
  });
}
