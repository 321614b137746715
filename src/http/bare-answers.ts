import { type ApiCors, apiHeaders, requestIdOf } from "./answer-headers";

/**
 * `GET` and `HEAD {AUTH_API_PREFIX}/healthz`, answered before the app. A monitor's poll (and the bench's bare route)
 * needs nothing the app builds per request — the match among ~500 routes, the context, the services, five
 * middlewares — which cost it two thirds of its CPU (docs/performance.md, "Issue 48: per-request overhead"). The
 * answer is the app's, header for header: the JSON string "OK", the auth API's CORS headers and
 * `Cache-Control: no-store` (`apiHeaders`, the same function the app's middleware calls), the request id. A request
 * that is anything else — a preflight, one with a body, the path spelled otherwise (percent-encoded, a trailing
 * slash) — goes through the app, which answers it as before. The health check touches no limiter there either
 * (src/rate-limits/flood-guard.ts).
 */
export function bareAnswers(prefix: string, cors: ApiCors): (request: Request) => Response | null {
  const healthz = `${prefix.replace(/\/+$/, "")}/healthz`;
  const exposed = cors.exposeHeaders.join(",");
  return (request) => {
    const { method } = request;
    if ((method !== "GET" && method !== "HEAD") || request.body) return null;
    const url = request.url;
    const start = url.indexOf("/", url.indexOf(":") + 3);
    const query = url.indexOf("?", start);
    const path = url.slice(start, query === -1 ? undefined : query);
    if (path !== healthz) return null;
    const headers = new Headers({ "Content-Type": "application/json" });
    const allowed = cors.origin(request.headers.get("origin") || "", { req: { url, method, path } });
    apiHeaders(headers, allowed, exposed);
    headers.set("X-Request-Id", requestIdOf(request.headers));
    return new Response(method === "HEAD" ? null : '"OK"', { headers });
  };
}
