import {
  createRemoteJWKSet,
  customFetch,
  type JWKSCacheInput,
  type JWTPayload,
  jwksCache,
  jwtVerify,
} from "jose";
import type { AuthClient, Identity } from "./client.js";
import { type ClientCredentials, clientCredentialsTokens } from "./client-credentials.js";
import { EdgeAuthError } from "./errors.js";
import type { Decision, EvaluationRequest, Face, TokenVerdict } from "./service.js";

/** `auth({...})` off Cloudflare: where the service is, and how the app proves itself to its AuthZEN API. */
export interface RemoteOptions {
  /** The service's issuer, its `AUTH_SERVER_URL` (e.g. `https://auth.example.com/auth/v1`). */
  issuer: string;
  /** The service's key set; by default `<issuer>/.well-known/jwks.json`. */
  jwksUrl?: string;
  /** The Supabase face's issuer (`<origin>/supabase/auth/v1`), to accept its tokens too. */
  supabaseIssuer?: string;
  /** The AuthZEN API's host (the service's root URL, e.g. `https://auth.example.com`); needed for permissions. */
  authzenUrl?: string;
  /** An OAuth2 client of the service allowed the `authzen` scope; needed for permissions. */
  clientCredentials?: ClientCredentials;
  /** Another fetch (a test's, a proxy's). */
  fetch?: typeof fetch;
}

const HASURA = "https://hasura.io/jwt/claims";
/** The audience of the Supabase face's access tokens (GoTrue's). */
const SUPABASE_AUDIENCE = "authenticated";
const ALGORITHMS = ["RS256", "ES256", "EdDSA"];

const stringsOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
const stringOf = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** `live` off Cloudflare is the app's configuration error, said at its first request rather than ignored. */
const liveNeedsBinding = () =>
  new EdgeAuthError(
    "live-needs-binding",
    "@edge-auth/hono: `live` needs the service binding (auth({ binding })); off Cloudflare a token is trusted " +
      "until it expires",
    { status: 500 },
  );

/** The token's session access claims as an identity; null for anything else (an OAuth2 token, a bound one). */
function identityOf(payload: JWTPayload, face: Face): Identity | null {
  // RFC 9449 §7.1: a DPoP-bound token sent as Bearer is refused. Its proof's replay check is the service's (a Durable
  // Object), which only the binding reaches: off Cloudflare a bound token is never accepted.
  if (payload.cnf !== undefined || typeof payload.sub !== "string") return null;
  const orgId = stringOf(payload.org_id);
  const common = {
    source: "token" as const,
    claims: payload as Record<string, unknown>,
    ...(orgId ? { org: { id: orgId } } : {}),
    face,
    credential: "access-token" as const,
  };
  if (face === "nhost") {
    const hasura = payload[HASURA] as Record<string, unknown> | undefined;
    // A token with an audience is an OAuth2 token for some API, not a session's: the service refuses it too.
    if (typeof hasura !== "object" || hasura === null || payload.aud !== undefined) return null;
    const sid = stringOf(payload.sid);
    return {
      ...common,
      user: {
        id: payload.sub,
        roles: stringsOf(hasura["x-hasura-allowed-roles"]),
        defaultRole: stringOf(hasura["x-hasura-default-role"]) ?? "",
      },
      // Not `live`: off Cloudflare nothing asked the service whether it still stands.
      session: sid ? { id: sid, live: false } : null,
    };
  }
  const sessionId = stringOf(payload.session_id);
  const role = stringOf(payload.role) ?? "";
  const appRoles = stringsOf((payload.app_metadata as Record<string, unknown> | undefined)?.roles);
  return {
    ...common,
    user: { id: payload.sub, roles: appRoles.length ? appRoles : role ? [role] : [], defaultRole: role },
    session: sessionId ? { id: sessionId, live: false } : null,
  };
}

/**
 * `c.var.auth` off Cloudflare: tokens verified here with jose against the service's JWKS (cached, refetched for a key
 * id it has not seen: a rotation is picked up at once), permissions asked of the AuthZEN API with a client-credentials
 * token. No `live`: whether a session still stands only the service knows, and only the binding asks it for free.
 */
export function remoteClient(options: RemoteOptions): AuthClient {
  const jwksUrl = new URL(options.jwksUrl ?? `${options.issuer.replace(/\/$/, "")}/.well-known/jwks.json`);
  // Only settled keys are kept between requests; each verification builds its key set around them (a key set object
  // shared by requests would share its pending fetch, which Workers forbid).
  const keyCache: JWKSCacheInput = {};
  const tokens = options.clientCredentials
    ? clientCredentialsTokens(options.issuer, options.clientCredentials, options.fetch)
    : undefined;
  const fetchImpl = options.fetch ?? fetch;

  const keySet = () =>
    createRemoteJWKSet(jwksUrl, {
      [jwksCache]: keyCache,
      ...(options.fetch ? { [customFetch]: options.fetch } : {}),
    });

  /** A session access token of either face as an identity, or why not. */
  async function verifySession(token: string): Promise<Identity | string> {
    const keys = keySet();
    const faces: [Face, string | undefined][] = [
      ["nhost", options.issuer],
      ["supabase", options.supabaseIssuer],
    ];
    let reason = "not a token of the service";
    for (const [face, issuer] of faces) {
      if (!issuer) continue;
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer,
          typ: "JWT",
          algorithms: ALGORITHMS,
          requiredClaims: ["sub", "exp", "iat"],
          ...(face === "supabase" ? { audience: SUPABASE_AUDIENCE } : {}),
        });
        return identityOf(payload, face) ?? "not a session token";
      } catch (error) {
        reason = (error as { code?: string }).code ?? "invalid";
      }
    }
    return reason;
  }

  /** An OAuth2 access token (`at+jwt`, RFC 9068) the service issued for `audience`: its claims, or why not. */
  async function verifyForAudience(token: string, audience: string): Promise<JWTPayload | string> {
    try {
      const { payload } = await jwtVerify(token, keySet(), {
        issuer: options.issuer,
        audience,
        typ: "at+jwt",
        algorithms: ALGORITHMS,
        requiredClaims: ["sub", "exp", "client_id"],
      });
      return payload;
    } catch (error) {
      return (error as { code?: string }).code ?? "invalid";
    }
  }

  async function evaluate<T>(path: string, body: unknown): Promise<T> {
    if (!options.authzenUrl || !tokens) {
      throw new EdgeAuthError(
        "authzen-not-configured",
        "@edge-auth/hono: permissions off Cloudflare need `authzenUrl` and `clientCredentials`",
        { status: 500 },
      );
    }
    const url = `${options.authzenUrl.replace(/\/$/, "")}${path}`;
    const send = async (token: string) =>
      fetchImpl(url, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    let response = await send(await tokens.get());
    // A cached token the API no longer takes (revoked, its client's scope changed): one fresh token, once.
    if (response.status === 401) response = await send(await tokens.get(true));
    const answer: unknown = await response.json().catch(() => null);
    if (response.ok && answer !== null) return answer as T;
    // AuthZEN's 400 is the app's request (an unknown type, a property the service supplies). AuthZEN answers an
    // error as a JSON string, its message, which the app gets as is.
    if (response.status === 400) {
      throw new EdgeAuthError(
        "invalid-request",
        typeof answer === "string" ? answer : "bad evaluation request",
      );
    }
    throw new EdgeAuthError(
      response.status === 503 ? "service-unavailable" : "authzen-failed",
      `@edge-auth/hono: ${url} answered ${response.status}`,
      { status: response.status === 503 ? 503 : 502 },
    );
  }

  return {
    mode: "remote",
    async authenticate(request, opts) {
      if (opts?.live) throw liveNeedsBinding();
      const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "");
      if (!match) return null;
      const found = await verifySession(match[1]!);
      return typeof found === "string" ? null : found;
    },
    async verifyToken(token, opts): Promise<TokenVerdict> {
      if (opts?.live) throw liveNeedsBinding();
      if (opts?.audience) {
        const payload = await verifyForAudience(token, opts.audience);
        if (typeof payload === "string") return { active: false, reason: payload };
        const orgId = stringOf(payload.org_id);
        return {
          active: true,
          claims: payload,
          userId: payload.sub!,
          ...(orgId ? { orgId } : {}),
          face: "nhost",
        };
      }
      const found = await verifySession(token);
      if (typeof found === "string") return { active: false, reason: found };
      return {
        active: true,
        claims: found.claims ?? {},
        userId: found.user.id,
        ...(found.session ? { sessionId: found.session.id } : {}),
        ...(found.org ? { orgId: found.org.id } : {}),
        face: found.face,
      };
    },
    check: (request: EvaluationRequest) => evaluate<Decision>("/access/v1/evaluation", request),
    async checkMany(requests: EvaluationRequest[], opts) {
      const answer = await evaluate<{ evaluations: Decision[] }>("/access/v1/evaluations", {
        evaluations: requests,
        ...(opts?.semantic ? { options: { evaluations_semantic: opts.semantic } } : {}),
      });
      return answer.evaluations;
    },
  };
}
