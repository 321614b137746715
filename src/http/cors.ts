import type { Context } from "hono";
import type { Config } from "../config";

/**
 * The browser origins the auth and storage APIs answer with credentials: `AUTH_CORS_ORIGINS` when set, else the
 * origins of `AUTH_CLIENT_URL` and of the allowed redirect URLs (the app's own front-end).
 */
export function corsOrigins(config: Config): string[] {
  if (config.urls.corsOrigins.length > 0) return config.urls.corsOrigins;
  const origins = new Set<string>();
  for (const url of [config.urls.client, ...config.urls.allowedRedirects]) {
    try {
      const { origin } = new URL(url);
      // Wildcard and custom-scheme entries name no web origin.
      if (origin !== "null" && !origin.includes("*")) origins.add(origin);
    } catch {}
  }
  return [...origins];
}

/** Origins already reported by this isolate: each refusal is worth one line, not one per request. */
const reported = new Set<string>();

/**
 * On a development server, a browser call from an origin that is not allowed fails in the browser as a bare "Failed
 * to fetch", with nothing in the server's log. Say so once per origin, with the setting to change and the value to
 * add. Production stays quiet: there, any site may make a visitor's browser try.
 */
export function reportRefusedOrigin(c: RequestOf, config: Config, origin: string, allowed: string[]): void {
  if (!config.development || reported.has(origin) || reported.size >= 100) return;
  reported.add(origin);
  const value = [...allowed, origin].join(",");
  console.warn(
    JSON.stringify({
      level: "warn",
      what: "cors",
      detail: `refused a browser call from ${origin} (${c.req.method} ${new URL(c.req.url).pathname}): allow it with AUTH_CORS_ORIGINS='${value}' in .dev.vars, then restart npm start`,
    }),
  );
}

/** What the origin check reads of a request: a Hono context, or a request answered before the app (bare-answers.ts). */
export type RequestOf = Pick<Context, "req"> | { req: { url: string; method: string; path: string } };

/** A `cors()` origin callback for `allowed` that reports refusals (above). */
export function allowedOrigin(config: Config, allowed: string[]) {
  return (origin: string, c: RequestOf): string | null => {
    if (allowed.includes(origin)) return origin;
    // A same-origin request (the service's own pages) needs no CORS answer and is no refusal.
    if (origin && origin !== new URL(c.req.url).origin) reportRefusedOrigin(c, config, origin, allowed);
    return null;
  };
}
