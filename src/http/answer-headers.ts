import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "./app-env";
import type { RequestOf } from "./cors";

/**
 * Edits the headers of the answer a route gave, in place. Hono's `c.header()` after the answer (and `cors()`, which
 * sets its headers on a placeholder answer before the route runs, then copies them onto the route's) builds a new
 * `Response` each time: three or four per request with CORS, the default `Cache-Control` and the request id, a
 * fifth of a bare route's CPU (docs/performance.md, "Issue 48: per-request overhead"). An answer the Worker made
 * itself has mutable headers; one it passed through (a `fetch()`'s, `Response.redirect()`'s) does not, and is
 * copied once, as Hono would.
 */
export function editAnswer(c: Context, edit: (headers: Headers) => void): void {
  try {
    edit(c.res.headers);
  } catch (error) {
    // workerd refuses to change immutable headers with a TypeError, before changing any.
    if (!(error instanceof TypeError)) throw error;
    c.res = new Response(c.res.body, c.res);
    edit(c.res.headers);
  }
}

/**
 * Hono copies the headers a route set with `c.header()` onto an answer the route (or an error handler) built itself
 * (`new Response`, `Response.json`) only through a placeholder answer made before the route ran, which `cors()` used
 * to make on every request. It is made here only when a route sets a header before answering, so those answers keep
 * every header they had (a page's CSP on an OAuth2 error's answer).
 */
function keepRouteHeaders(c: Context<AppEnv>): void {
  const header = c.header;
  c.header = ((...args: Parameters<typeof header>) => {
    c.header = header;
    if (!c.finalized) void c.res;
    return header(...args);
  }) as typeof header;
}

export interface ApiCors {
  /** The allowed origin for a request's `Origin` (the empty string without one), or null: none allowed. */
  origin: (origin: string, c: RequestOf) => string | null;
  exposeHeaders: string[];
  maxAge: number;
  /** `Access-Control-Allow-Credentials: true` on every answer: the auth API's (the default), not the Supabase face's. */
  credentials?: boolean;
  /** The request headers a preflight allows; none given: the ones the preflight asks for. */
  allowHeaders?: string[];
}

/**
 * An API's answer headers: CORS (with credentials for the auth API, without for the Supabase face), as Hono's `cors()`
 * answers them (a preflight is answered by `cors()` itself), and `Cache-Control: no-store` on every answer that does
 * not say otherwise (contract §1: token and error answers must never be cached). Set once, after the route, on its
 * answer: an error's answer and a 404 get them too, as the route's own would.
 */
export function apiAnswerHeaders(
  options: ApiCors & {
    /** `Cache-Control: no-store` on answers that do not say otherwise (the default); false: CORS only. */
    noStore?: boolean;
  },
): MiddlewareHandler<AppEnv> {
  const credentials = options.credentials ?? true;
  const preflight = cors({
    origin: options.origin,
    credentials,
    maxAge: options.maxAge,
    exposeHeaders: options.exposeHeaders,
    ...(options.allowHeaders ? { allowHeaders: options.allowHeaders } : {}),
  });
  const exposed = options.exposeHeaders.join(",");
  return async (c, next) => {
    if (c.req.method === "OPTIONS") return preflight(c, next);
    const allowed = options.origin(c.req.header("origin") || "", c);
    keepRouteHeaders(c);
    await next();
    editAnswer(c, (headers) => {
      // A page (the account center, the sign-in and consent pages, the console) is for the browser's own tab, never
      // for another origin's script: with CORS and credentials, an app origin on the same site (its cookies are sent)
      // could read a signed-in page whole, its form tokens included.
      if (headers.get("Content-Type")?.startsWith("text/html")) return noStoreUnlessSaid(headers);
      corsHeaders(headers, allowed, exposed, credentials);
      if (options.noStore ?? true) noStoreUnlessSaid(headers);
    });
  };
}

/**
 * The headers `apiAnswerHeaders` sets on the auth API's answers, for `allowed` (the origin allowed, or null) and the
 * exposed headers' list.
 */
export function apiHeaders(headers: Headers, allowed: string | null, exposed: string): void {
  corsHeaders(headers, allowed, exposed, true);
  noStoreUnlessSaid(headers);
}

function corsHeaders(headers: Headers, allowed: string | null, exposed: string, credentials: boolean): void {
  if (allowed) headers.set("Access-Control-Allow-Origin", allowed);
  if (credentials) headers.set("Access-Control-Allow-Credentials", "true");
  headers.set("Access-Control-Expose-Headers", exposed);
  headers.append("Vary", "Origin");
}

/** Token and error answers must never be cached (contract §1): `no-store` unless the route said otherwise. */
function noStoreUnlessSaid(headers: Headers): void {
  if (!headers.has("Cache-Control")) headers.set("Cache-Control", "no-store");
}

/** `Cache-Control: no-store` on every answer that does not say otherwise, set once on the route's answer. */
export const noStoreByDefault: MiddlewareHandler = async (c, next) => {
  await next();
  editAnswer(c, noStoreUnlessSaid);
};

/** The request's id (src/http/context.ts): Cloudflare's `cf-ray`, or a random UUID where there is none (local). */
export function requestIdOf(headers: { get(name: string): string | null }): string {
  return headers.get("cf-ray") ?? crypto.randomUUID();
}
