import type { Hono } from "hono";
import type { Config } from "./config";
import type { Env } from "./env";
import { ConfigError } from "./errors";
import type { AppEnv } from "./http/app-env";
import { logError } from "./http/context";
import { createApp } from "./runtime/app";
import { serviceConfig } from "./runtime/config";
import { handleQueueBatch } from "./runtime/consumers";
import { runScheduled } from "./runtime/cron";

export { SignInLockout } from "./auth";
export { OneTimeCode } from "./auth/links/one-time-code";
export { GuessGuard } from "./auth/mfa/guess-guard";
export { WebauthnChallenge } from "./auth/webauthn/webauthn-challenge";
export { RateLimiter } from "./rate-limits/rate-limiter";
export { JtiLedger } from "./replay/jti-ledger";
// The service binding's RPC entrypoints (contract platform.md §1, docs/workers.md).
export { AuthService } from "./runtime/entrypoints/auth-service";
export { SessionFamilies } from "./token-families";
export { RefreshSession } from "./token-families/legacy";

const apps = new WeakMap<Config, Hono<AppEnv>>();

function isDevelopmentServer(env: Env): boolean {
  try {
    return ["localhost", "127.0.0.1", "[::1]"].includes(new URL(String(env.AUTH_SERVER_URL)).hostname);
  } catch {
    return false;
  }
}

function appFor(config: Config): Hono<AppEnv> {
  let app = apps.get(config);
  if (!app) {
    app = createApp(config);
    apps.set(config, app);
  }
  return app;
}

/**
 * The apps answer their own errors (app.ts, storage/app.ts); this catches what escapes them anyway, so that a client
 * never sees the runtime's plain-text stack: the contract's JSON 500 with a request id, the detail in the log.
 */
function lastResortAnswer(request: Request, error: unknown): Response {
  const requestId = request.headers.get("cf-ray") ?? crypto.randomUUID();
  logError(requestId, "unhandled", error);
  return Response.json(
    { status: 500, message: "internal server error", error: "internal-server-error", requestId },
    { status: 500, headers: { "Cache-Control": "no-store", "X-Request-Id": requestId } },
  );
}

export default {
  async fetch(request, env, ctx) {
    let config: Config;
    try {
      config = serviceConfig(env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      // The deployer reads the reason in the log.
      console.error(JSON.stringify({ level: "error", what: "config", detail: error.message }));
      // The client gets the standard body. A development server (its URL on loopback: plain `wrangler dev` on a fresh
      // checkout, usually) also says what is wrong and what to run; a deployment says nothing of its configuration.
      const message = isDevelopmentServer(env)
        ? `the service is not configured (${error.message}). Running it locally? Start it with \`npm start\`, which generates the development secrets into .dev.vars and applies the migrations`
        : "internal server error";
      return Response.json(
        { status: 500, message, error: "internal-server-error" },
        { status: 500, headers: { "Cache-Control": "no-store" } },
      );
    }
    try {
      return await appFor(config).fetch(request, env, ctx);
    } catch (error) {
      return lastResortAnswer(request, error);
    }
  },
  async scheduled(controller, env, ctx) {
    await runScheduled(controller, env, ctx);
  },
  async queue(batch, env, ctx) {
    await handleQueueBatch(batch, env, (work) => ctx.waitUntil(work));
  },
} satisfies ExportedHandler<Env>;
