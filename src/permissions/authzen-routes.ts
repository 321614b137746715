import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Config } from "../config";
import { RateLimitedError, UnavailableError } from "../errors";
import { checkAdminSecret } from "../http/admin-secret";
import type { AppEnv } from "../http/app-env";
import { presented } from "../http/auth";
import { boundedBody } from "../http/body-limit";
import { settleRefusal } from "../http/refusal";
import { MACHINE_TOKEN_GTY, verifyOAuth2AccessToken } from "../oauth2";
import { type Decision, type EvaluationsSemantic, evaluate, evaluateMany, SEMANTICS } from "./evaluate";
import { depthOf, MAX_DEPTH, MAX_EVALUATIONS, PermissionRequestError, refuseMalformedText } from "./request";
import { searchActions } from "./search";
import { searchResources, searchSubjects } from "./search-entities";

/**
 * The AuthZEN 1.0 Authorization API at the host's root (contract platform.md §2): evaluation, evaluations and the
 * PDP's metadata. Its answers and errors are AuthZEN's (§"Error Responses": the status and an error message string),
 * not the auth API's. Callers are PEPs: a client's own access token (`client_credentials`) with the `authzen` scope,
 * or the admin secret.
 */

/** The scope a client's token needs here. */
export const AUTHZEN_SCOPE = "authzen";
/** A request body past this is refused (AuthZEN §"Availability & Denial of Service"). */
export const MAX_BODY_BYTES = 256 * 1024;

const EVALUATION_PATH = "/access/v1/evaluation";
const EVALUATIONS_PATH = "/access/v1/evaluations";
const ACTION_SEARCH_PATH = "/access/v1/search/action";
const SUBJECT_SEARCH_PATH = "/access/v1/search/subject";
const RESOURCE_SEARCH_PATH = "/access/v1/search/resource";
const METADATA_PATH = "/.well-known/authzen-configuration";
/** Only these paths pass the API's middleware: the sub-app is mounted at the root, before every other route. */
const API_PATHS = "/access/v1/*";

/** AuthZEN's error: the status and the message as a JSON string; never cached; the PEP's request id echoed. */
function problem(
  c: Context<AppEnv>,
  status: ContentfulStatusCode,
  message: string,
  { challenge = false, retryAfter }: { challenge?: boolean; retryAfter?: number } = {},
) {
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  if (challenge) headers["WWW-Authenticate"] = `Bearer scope="${AUTHZEN_SCOPE}"`;
  if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
  return c.json(message, status, headers);
}

class Unauthenticated extends Error {}

/**
 * The caller is a PEP this service trusts: the admin secret (constant time, wrong guesses counted as on the admin
 * API), or an access token this server issued to a client for itself (`client_credentials`: a person's token, even
 * with the scope, is not a PEP) carrying `authzen`.
 */
async function requirePep(c: Context<AppEnv>): Promise<void> {
  const secret = await checkAdminSecret(c);
  if (secret.outcome === "right") return;
  if (secret.outcome === "limited") throw RateLimitedError.forBucket("BRUTE_FORCE", secret.retryAfterSeconds);
  if (secret.outcome === "wrong") throw new Unauthenticated("wrong admin secret");
  const sent = presented(c.req.header("authorization"));
  if (sent?.scheme !== "Bearer") throw new Unauthenticated("a Bearer access token is required");
  const token = await verifyOAuth2AccessToken(c.var.config, sent.token);
  if (!token || token.grant_id !== undefined || (token.gty && token.gty !== MACHINE_TOKEN_GTY)) {
    throw new Unauthenticated("not a client's own access token of this server");
  }
  // RFC 9068 §4: a token meant for another resource server is not one for this PDP.
  const audiences = Array.isArray(token.aud) ? token.aud : [token.aud];
  const origin = new URL(c.var.config.urls.server).origin;
  const pdps = [token.client_id, origin, `${origin}${c.var.config.urls.authPath}`];
  if (!audiences.some((audience) => audience !== undefined && pdps.includes(audience))) {
    throw new Unauthenticated("the access token is for another resource");
  }
  if (token.cnf?.jkt)
    throw new Unauthenticated("a DPoP-bound token is not accepted here: use a bearer token");
  if (!token.scope.split(" ").includes(AUTHZEN_SCOPE)) {
    throw new Unauthenticated(`the access token lacks the ${AUTHZEN_SCOPE} scope`);
  }
}

/** The request's JSON object, within the depth bound, or a 400. */
async function jsonBody(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new PermissionRequestError("the body must be a JSON object");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new PermissionRequestError("the body must be a JSON object");
  }
  if (depthOf(body) > MAX_DEPTH + 2)
    throw new PermissionRequestError(`the request nests deeper than ${MAX_DEPTH}`);
  refuseMalformedText(body);
  return body as Record<string, unknown>;
}

/** A decision as AuthZEN words it: the policies that decided it, when any, in its context. */
function wire(decision: Decision) {
  return decision.reasons
    ? { decision: decision.decision, context: { reason_admin: { policies: decision.reasons } } }
    : { decision: decision.decision };
}

/** Each evaluation of `evaluations`, with the top-level subject, action, resource and context as defaults. */
function withDefaults(body: Record<string, unknown>, items: unknown[]): unknown[] {
  return items.map((item) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      throw new PermissionRequestError("each of evaluations must be an object");
    }
    const own = item as Record<string, unknown>;
    return {
      subject: own.subject ?? body.subject,
      action: own.action ?? body.action,
      resource: own.resource ?? body.resource,
      context: own.context ?? body.context,
    };
  });
}

function semanticOf(options: unknown): EvaluationsSemantic {
  if (options === undefined) return "execute_all";
  if (typeof options !== "object" || options === null)
    throw new PermissionRequestError("options must be an object");
  const asked = (options as Record<string, unknown>).evaluations_semantic;
  if (asked === undefined) return "execute_all";
  if (!SEMANTICS.includes(asked as EvaluationsSemantic)) {
    throw new PermissionRequestError(`options.evaluations_semantic must be one of ${SEMANTICS.join(", ")}`);
  }
  return asked as EvaluationsSemantic;
}

/** The PDP's metadata (AuthZEN §"Policy Decision Point Metadata"): `pdp` is the identifier it is published for. */
function metadata(config: Config, pdp: string) {
  const root = new URL(config.urls.server).origin;
  return {
    policy_decision_point: pdp,
    access_evaluation_endpoint: `${root}${EVALUATION_PATH}`,
    access_evaluations_endpoint: `${root}${EVALUATIONS_PATH}`,
    search_subject_endpoint: `${root}${SUBJECT_SEARCH_PATH}`,
    search_resource_endpoint: `${root}${RESOURCE_SEARCH_PATH}`,
    search_action_endpoint: `${root}${ACTION_SEARCH_PATH}`,
  };
}

export function authzenRoutes(config: Config) {
  const origin = new URL(config.urls.server).origin;
  const routes = new Hono<AppEnv>();
  routes.get(METADATA_PATH, (c) =>
    c.json(metadata(config, origin), 200, { "Cache-Control": "public, max-age=300" }),
  );
  // Under the path-inserted name too (AuthZEN §"Obtaining Policy Decision Point Metadata", as RFC 8414 §3.1 does):
  // a PEP that knows the service by its server URL (`…/auth/v1`) finds it there, with that URL as the identifier.
  if (config.urls.authPath) {
    routes.get(`${METADATA_PATH}${config.urls.authPath}`, (c) =>
      c.json(metadata(config, `${origin}${config.urls.authPath}`), 200, {
        "Cache-Control": "public, max-age=300",
      }),
    );
  }

  const api = new Hono<AppEnv>();
  api.use(API_PATHS, async (c, next) => {
    // AuthZEN §"Request Identification": the PEP's identifier comes back on the answer, whatever it is.
    const requestId = c.req.header("x-request-id");
    await next();
    if (requestId) c.header("X-Request-ID", requestId);
  });
  api.use(
    API_PATHS,
    boundedBody(
      MAX_BODY_BYTES,
      () => new PermissionRequestError(`the request body exceeds ${MAX_BODY_BYTES} bytes`),
    ),
  );
  api.use(API_PATHS, async (c, next) => {
    await requirePep(c);
    await next();
  });
  api.post(EVALUATION_PATH, async (c) => {
    const decision = await evaluate(c.var.deps, await jsonBody(c));
    return c.json(wire(decision), 200, { "Cache-Control": "no-store" });
  });
  api.post(EVALUATIONS_PATH, async (c) => {
    const body = await jsonBody(c);
    const items = body.evaluations;
    if (items !== undefined && !Array.isArray(items))
      throw new PermissionRequestError("evaluations must be an array");
    // Without evaluations the request is one evaluation, answered as the evaluation API does (§"Access Evaluations").
    if (!items || items.length === 0) {
      return c.json(wire(await evaluate(c.var.deps, body)), 200, { "Cache-Control": "no-store" });
    }
    if (items.length > MAX_EVALUATIONS) {
      throw new PermissionRequestError(`at most ${MAX_EVALUATIONS} evaluations in one request`);
    }
    const decisions = await evaluateMany(c.var.deps, withDefaults(body, items), semanticOf(body.options));
    return c.json({ evaluations: decisions.map(wire) }, 200, { "Cache-Control": "no-store" });
  });
  api.post(ACTION_SEARCH_PATH, async (c) =>
    c.json(await searchActions(c.var.deps, await jsonBody(c)), 200, { "Cache-Control": "no-store" }),
  );
  api.post(SUBJECT_SEARCH_PATH, async (c) =>
    c.json(await searchSubjects(c.var.deps, await jsonBody(c)), 200, { "Cache-Control": "no-store" }),
  );
  api.post(RESOURCE_SEARCH_PATH, async (c) =>
    c.json(await searchResources(c.var.deps, await jsonBody(c)), 200, { "Cache-Control": "no-store" }),
  );
  api.onError(async (caught, c) => {
    if (caught instanceof PermissionRequestError) return problem(c, 400, caught.message);
    if (caught instanceof Unauthenticated) return problem(c, 401, caught.message, { challenge: true });
    const error = await settleRefusal(c, caught);
    const retryAfter =
      error instanceof UnavailableError || error instanceof RateLimitedError
        ? error.retryAfterSeconds
        : undefined;
    return problem(c, error.status, error.message, { retryAfter });
  });
  return routes.route("/", api);
}
