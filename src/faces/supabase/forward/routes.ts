import { type Context, Hono } from "hono";
import type { Config } from "../../../config";
import { RateLimitedError, UnavailableError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { settleRefusal } from "../../../http/refusal";
import { floodGuard } from "../../../rate-limits/flood-guard";
import { GoTrueError, goTrueErrorResponse, toGoTrueError } from "../gotrue";
import { callerOf } from "./caller";
import { forwardHttp } from "./http";
import { upstreamPath } from "./path";
import { forwardRealtime } from "./realtime";
import { gatewayFailure, UpstreamFailed } from "./upstream-fetch";

/**
 * The data calls of supabase-js forwarded to the project set as `AUTH_SUPABASE_UPSTREAM_URL` (contract supabase.md
 * §4): `from(…)` and `rpc` (PostgREST, `rest/v1`), GraphQL (`graphql/v1`), `functions.invoke` (`functions/v1`) and
 * `channel(…)` (Realtime's socket, `realtime/v1`). The face's own refusals (a key, a token) are GoTrue's; the
 * upstream's answers are its own; the upstream failing is 502, 503 or 504 in PostgREST's shape.
 */
export function forwardedDataCalls(config: Config): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  if (!config.supabase.upstream) return app;
  const forward = async (c: Context<AppEnv>) => {
    const raw = new URL(c.req.url).pathname.replace(/^\/supabase/, "");
    const path = upstreamPath(raw);
    if (!path) {
      return c.json(
        {
          code: "bad_path",
          details: null,
          hint: null,
          message: "The path holds an encoded separator or a dot-segment",
        },
        400,
        { "Cache-Control": "no-store" },
      );
    }
    if (path.startsWith("/realtime/") && c.req.header("upgrade")?.toLowerCase() === "websocket") {
      return forwardRealtime(c, path);
    }
    return forwardHttp(c, path, await callerOf(c));
  };
  // The same per-address flood guard as every request of the face; only on these paths (a sub-app's `*` would be all
  // of `/supabase`, GoTrue's routes guarded twice).
  for (const path of ["/rest/v1", "/rest/v1/*", "/graphql/v1", "/functions/v1/*", "/realtime/v1/*"])
    app.all(path, floodGuard, forward);
  app.onError(async (caught, c) => {
    const headers: Record<string, string> = { "Cache-Control": "no-store" };
    if (caught instanceof GoTrueError) return goTrueErrorResponse(c, caught, headers);
    if (caught instanceof UpstreamFailed) {
      console.warn(
        JSON.stringify({
          level: "warn",
          what: "supabase-upstream",
          status: caught.status,
          reason: caught.reason,
        }),
      );
      return gatewayFailure(caught.status);
    }
    const error = await settleRefusal(c, caught);
    if (error instanceof RateLimitedError || error instanceof UnavailableError)
      headers["Retry-After"] = String(error.retryAfterSeconds);
    return goTrueErrorResponse(c, toGoTrueError(error), headers);
  });
  return app;
}

/**
 * What a browser's data calls send and read beyond the face's own headers, for CORS: PostgREST's (`Prefer`, the
 * schema profiles, `Range`; `Content-Range` carries the count), Edge Functions' region.
 */
export const FORWARDED_HEADERS = {
  request: ["prefer", "accept-profile", "content-profile", "range", "range-unit", "x-region"],
  answer: ["content-range", "content-location", "preference-applied", "location"],
};
