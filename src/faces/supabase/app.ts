import { Hono } from "hono";
import type { Config } from "../../config";
import { RateLimitedError, UnavailableError } from "../../errors";
import { apiAnswerHeaders, noStoreByDefault } from "../../http/answer-headers";
import type { AppEnv } from "../../http/app-env";
import { boundedBody } from "../../http/body-limit";
import { allowedOrigin, corsOrigins } from "../../http/cors";
import { settleRefusal } from "../../http/refusal";
import { MAX_JSON_BODY_BYTES } from "../../http/validation";
import { floodGuard } from "../../rate-limits/flood-guard";
import { checkApiKey } from "./api-keys";
import { FORWARDED_HEADERS, forwardedDataCalls } from "./forward/routes";
import { goTrueAdminLinkRoutes } from "./gotrue/admin-link-routes";
import { goTrueAdminMfaRoutes } from "./gotrue/admin-mfa-routes";
import { goTrueAdminRoutes } from "./gotrue/admin-routes";
import { GoTrueError, goTrueErrorResponse, toGoTrueError } from "./gotrue/errors";
import { goTrueIdentityRoutes } from "./gotrue/identity-routes";
import { goTrueMfaRoutes } from "./gotrue/mfa-routes";
import { goTrueOAuthRoutes } from "./gotrue/oauth-routes";
import { goTrueOtpRoutes } from "./gotrue/otp-routes";
import { goTruePasskeyRoutes } from "./gotrue/passkey-routes";
import { goTrueReauthenticateRoutes } from "./gotrue/reauthenticate-routes";
import { goTrueSessionRoutes } from "./gotrue/session-routes";
import { goTrueSsoRoutes } from "./gotrue/sso-routes";
import { goTrueSystemRoutes } from "./gotrue/system-routes";
import { goTrueUserRoutes } from "./gotrue/user-routes";
import { goTrueVerifyLinkRoutes } from "./gotrue/verify-link-routes";
import { storageFaceApp } from "./storage/app";

/**
 * The Supabase face (contract supabase.md §1), mounted at `/supabase` so that `createClient("{origin}/supabase", key)`
 * works unchanged: GoTrue's API under `/supabase/auth/v1`, answering in GoTrue's shapes and errors. It parses,
 * calls the core, and shapes; no flow is written here.
 */

/** GoTrue's routes a browser reaches without a key (its gateway leaves them open). */
const OPEN_PATHS =
  /\/auth\/v1\/(health|\.well-known\/jwks\.json|verify|authorize|authorize\/link|callback|sso\/saml\/.*)$/;

const KEY_REFUSALS = {
  missing: "No API key found in request",
  invalid: "Invalid API key",
  "secret-in-browser": "Forbidden use of secret API key in browser",
} as const;

function goTrueApp(): Hono<AppEnv> {
  const auth = new Hono<AppEnv>();
  auth.use(
    noStoreByDefault,
    boundedBody(
      MAX_JSON_BODY_BYTES,
      () => new GoTrueError(413, "request_too_large", `Request body exceeds ${MAX_JSON_BODY_BYTES} bytes`),
    ),
    // The same per-address flood guard as every request of the Nhost API.
    floodGuard,
    async (c, next) => {
      if (!OPEN_PATHS.test(c.req.path)) {
        const key = await checkApiKey(c, c.get("config"));
        if ("retryAfterSeconds" in key) throw new RateLimitedError(key.retryAfterSeconds);
        if ("refused" in key) {
          throw new GoTrueError(
            401,
            key.refused === "missing" ? "no_api_key" : "invalid_api_key",
            KEY_REFUSALS[key.refused],
          );
        }
      }
      await next();
    },
  );
  auth.route("/", goTrueSystemRoutes);
  auth.route("/", goTrueSessionRoutes);
  auth.route("/", goTrueUserRoutes);
  auth.route("/", goTrueAdminRoutes);
  auth.route("/", goTruePasskeyRoutes);
  auth.route("/", goTrueOAuthRoutes);
  auth.route("/", goTrueIdentityRoutes);
  auth.route("/", goTrueSsoRoutes);
  auth.route("/", goTrueMfaRoutes);
  auth.route("/", goTrueAdminMfaRoutes);
  auth.route("/", goTrueOtpRoutes);
  auth.route("/", goTrueVerifyLinkRoutes);
  auth.route("/", goTrueReauthenticateRoutes);
  auth.route("/", goTrueAdminLinkRoutes);
  // A sub-app's notFound is not its own once mounted: the last route answers every other path in GoTrue's shape.
  auth.all("*", () => {
    throw new GoTrueError(404, "not_found", "Not found");
  });
  auth.onError(async (caught, c) => {
    const headers: Record<string, string> = { "Cache-Control": "no-store" };
    if (caught instanceof GoTrueError) return goTrueErrorResponse(c, caught, headers);
    // The core's refusal, settled as the Nhost API settles it (concealment, the failed sign-in's audit, the log),
    // then worded as GoTrue's.
    const error = await settleRefusal(c, caught);
    if (error instanceof RateLimitedError || error instanceof UnavailableError)
      headers["Retry-After"] = String(error.retryAfterSeconds);
    return goTrueErrorResponse(c, toGoTrueError(error), headers);
  });
  return auth;
}

export function supabaseFace(config: Config): Hono<AppEnv> {
  const appOrigin = allowedOrigin(config, corsOrigins(config));
  return new Hono<AppEnv>()
    .basePath("/supabase")
    .use(
      // Set on the route's answer once (src/http/answer-headers.ts), as the Nhost API's are, not through Hono's
      // `cors()`, whose placeholder answer and `Vary` after the route each built a new `Response` on every request
      // (docs/performance.md, "The Supabase face's getUser and its answer headers").
      apiAnswerHeaders({
        origin: (origin, c) => appOrigin(origin, c),
        credentials: false,
        noStore: false,
        // Storage's too: storage-js sends x-upsert, x-metadata, cache-control; downloads answer with ranges and ETags;
        // TUS speaks in headers of its own. And PostgREST's, for the forwarded data calls (forward/routes.ts).
        allowHeaders: [
          "authorization",
          "apikey",
          "content-type",
          "x-client-info",
          "x-supabase-api-version",
          "x-upsert",
          "x-metadata",
          "cache-control",
          "content-encoding",
          "tus-resumable",
          "upload-length",
          "upload-metadata",
          "upload-offset",
          ...FORWARDED_HEADERS.request,
        ],
        exposeHeaders: [
          "x-sb-error-code",
          "X-Supabase-Api-Version",
          "X-Request-Id",
          "ETag",
          "Content-Range",
          "Content-Disposition",
          "Last-Modified",
          "Location",
          "Tus-Resumable",
          "Upload-Offset",
          "Upload-Length",
          ...FORWARDED_HEADERS.answer,
        ],
        maxAge: 600,
      }),
    )
    .route("/auth/v1", goTrueApp())
    .route("/storage/v1", storageFaceApp())
    .route("/", forwardedDataCalls(config));
}
