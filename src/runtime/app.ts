import { Hono } from "hono";
import { requireAdminSecret, requireConfiguredSecret } from "../admin";
import { registerSignInHooks } from "../auth";
import { asPages, faultPage, onPage } from "../browser/page-faults";
import type { Config } from "../config";
import { BOOKMARK_HEADER } from "../db/replica";
import { AppError, errorBody, RateLimitedError, UnavailableError } from "../errors";
import { type ApiCors, apiAnswerHeaders } from "../http/answer-headers";
import type { AppEnv } from "../http/app-env";
import { bareAnswers } from "../http/bare-answers";
import { boundedBody } from "../http/body-limit";
import { logError, requestContext } from "../http/context";
import { allowedOrigin, corsOrigins } from "../http/cors";
import { settleRefusal } from "../http/refusal";
import { systemRoutes } from "../http/system-routes";
import { emptyBodyAsJson, MAX_JSON_BODY_BYTES } from "../http/validation";
import { OAuth2Error, oauth2ErrorResponse } from "../oauth2/errors";
import { authDocument } from "../openapi/auth-document";
import { documentationRoutes } from "../openapi/document-routes";
import { floodGuard } from "../rate-limits/flood-guard";
import type { FeatureRoutes, Surface } from "./feature";
import { FEATURES } from "./features";
import { RememberedRouter } from "./remembered-routes";
import { createServices } from "./services";

const apiBodyLimit = boundedBody<AppEnv>(
  MAX_JSON_BODY_BYTES,
  () => new AppError("payload-too-large", `request body exceeds ${MAX_JSON_BODY_BYTES} bytes`),
);
const IMPORT_PATHS = /\/admin\/import\/nhost\//;
/**
 * The admin console is the operator's, signed in by its own cookie: no app origin reads it, pages or exports (its CSV
 * of users), whatever the allow-list says. Its pages are HTML, which no origin reads anyway (answer-headers.ts).
 */
const CONSOLE_PATH = /\/admin\/console(\/|$)/;

/**
 * The authorization server's endpoints that act on client credentials and bearer tokens only, never on a cookie,
 * answer CORS for any origin (without credentials): a browser app that is a public OAuth2 client calls them from its
 * own origin, which no deployment setting lists. The authorize and login page paths, which read the page's cookie,
 * are not among them.
 */
const OPEN_CORS_PATHS =
  /\/(oauth2\/(token|par|userinfo|revoke|introspect|jwks|device_authorization|register(\/[^/]+)?)|\.well-known\/(openid-configuration|oauth-authorization-server))$/;

/** Every feature's routes, in the order of the list (src/runtime/features.ts), built once per configuration. */
function routesOf(config: Config): FeatureRoutes[] {
  // What features add to every sign-in, registered with the routes that sign in (once: the registry is a set).
  for (const feature of FEATURES) if (feature.signInHooks) registerSignInHooks(feature.signInHooks);
  return FEATURES.map((feature) => feature.routes?.(config) ?? {});
}

/** The sub-apps the features mount on one surface, in the list's order. */
function surface(featureRoutes: FeatureRoutes[], name: Surface): Hono<AppEnv>[] {
  return featureRoutes.flatMap((routes) => routes[name] ?? []);
}

/**
 * Mounted at `{AUTH_API_PREFIX}/admin`: the console's pages first (`/admin/console`, signed in with the admin secret
 * through a cookie, src/admin/console/session.ts), then the admin API (contract §10, the secret in a header on every
 * request). Without `AUTH_ADMIN_SECRET` both answer 404.
 */
function adminSurface(featureRoutes: FeatureRoutes[]): Hono<AppEnv> {
  const admin = new Hono<AppEnv>()
    .use("/console/*", requireConfiguredSecret)
    .use("/console", requireConfiguredSecret);
  for (const routes of surface(featureRoutes, "console")) admin.route("/console", asPages(routes));
  const api = new Hono<AppEnv>().use(requireAdminSecret);
  for (const routes of surface(featureRoutes, "admin")) api.route("/", routes);
  return admin.route("/", api);
}

/** The auth API's CORS: the app's origins with credentials, any origin on the open paths (above). */
function authApiCors(config: Config): ApiCors {
  const appOrigin = allowedOrigin(config, corsOrigins(config));
  return {
    origin: (origin, c) =>
      OPEN_CORS_PATHS.test(c.req.path) ? "*" : CONSOLE_PATH.test(c.req.path) ? null : appOrigin(origin, c),
    maxAge: 600,
    // A browser client reads a DPoP nonce and a resource's challenge (RFC 9449 §8, §7.1) from these.
    exposeHeaders: ["X-Request-Id", BOOKMARK_HEADER, "DPoP-Nonce", "WWW-Authenticate"],
  };
}

/** The auth API, mounted under `AUTH_API_PREFIX`. */
export function createAuthApp(config: Config, featureRoutes = routesOf(config)): Hono<AppEnv> {
  const auth = new Hono<AppEnv>();
  auth.use(
    // CORS, and `Cache-Control: no-store` on token and error answers, which must never be cached (contract §1); routes
    // that may be cached say so themselves.
    apiAnswerHeaders(authApiCors(config)),
    // The import's batches and file bytes (src/move-in/) are bounded and read by its own routes: a file's bytes
    // stream through to R2, never held whole.
    // A GET or HEAD without a body (a session check) has nothing to bound or to read as `{}`: straight on.
    (c, next) =>
      ((c.req.method === "GET" || c.req.method === "HEAD") && !c.req.raw.body) ||
      IMPORT_PATHS.test(c.req.path)
        ? next()
        : apiBodyLimit(c, async () => {
            await emptyBodyAsJson(c, next);
          }),
    floodGuard,
  );
  auth.route("/", systemRoutes);
  for (const routes of surface(featureRoutes, "auth")) auth.route("/", routes);
  // A person's pages answer a fault as a page (src/browser/page-faults.ts); the built-in pages, on the "auth"
  // surface, mark themselves (src/pages/routes.ts).
  for (const routes of surface(featureRoutes, "pages")) auth.route("/", asPages(routes));
  auth.route("/admin", adminSurface(featureRoutes));
  auth.route(
    "/",
    documentationRoutes(() => authDocument(auth, config)),
  );
  return auth;
}

export function createApp(config: Config): Hono<AppEnv> {
  // The app's own router is the one every request is matched by (the mounted apps' routes are copied into it).
  const app = new Hono<AppEnv>({ router: new RememberedRouter() });
  const featureRoutes = routesOf(config);
  app.use(requestContext(config, createServices));
  for (const routes of surface(featureRoutes, "root")) app.route("/", routes);
  app.route(config.urls.authPrefix, createAuthApp(config, featureRoutes));
  for (const routes of surface(featureRoutes, "storage")) app.route(config.urls.storagePrefix, routes);
  app.notFound((c) => {
    const error = new AppError(
      "route-not-found",
      `no route for ${c.req.method} ${new URL(c.req.url).pathname}`,
    );
    return c.json(errorBody(error), error.status, { "Cache-Control": "no-store" });
  });
  app.onError(async (caught, c) => {
    // The authorization server answers in RFC 6749's shape, not the auth API's.
    if (caught instanceof OAuth2Error) {
      if (caught.reason) logError(c.var.requestId, caught.error, caught.reason, "warn");
      return oauth2ErrorResponse(caught);
    }
    const error = await settleRefusal(c, caught);
    // A person looking at a page reads a page, in their language, not the API's JSON.
    if (error.status >= 500 && onPage(c)) return faultPage(c, error);
    const headers: Record<string, string> = { "Cache-Control": "no-store" };
    if (error instanceof RateLimitedError || error instanceof UnavailableError)
      headers["Retry-After"] = String(error.retryAfterSeconds);
    // A fault's answer names the request, so whoever reports it can be matched with the log line.
    const body = error.status >= 500 ? { ...errorBody(error), requestId: c.var.requestId } : errorBody(error);
    return c.json(body, error.status, headers);
  });
  // The health check, answered before the app as the app would (src/http/bare-answers.ts).
  const bare = bareAnswers(config.urls.authPrefix, authApiCors(config));
  const dispatch = app.fetch;
  app.fetch = (request, ...rest) => bare(request) ?? dispatch(request, ...rest);
  return app;
}
