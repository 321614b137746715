import { parse } from "hono/utils/cookie";
import { userOfPersonalAccessToken } from "../auth";
import { BROWSER_SESSION_COOKIE, browserSessionOf } from "../browser/session";
import { AppError } from "../errors";
import { checkPresentedToken, presented } from "../http/auth";
import type { Deps } from "../http/deps";
import { actorOf } from "../http/impersonation";
import { verifyDPoPProof } from "../replay/dpop-proof";
import { verifyFaceToken } from "./face-tokens";
import { sessionStands } from "./liveness";
import { sameSite } from "./same-site";
import type { Authenticated, AuthenticateOptions } from "./types";
import { orgOf, userOfToken } from "./verify-token";

/**
 * `authenticate`: who sent a request that reached a consumer Worker, or null. Its `Authorization` header first: a
 * session access token of either face as `Bearer`, or as `DPoP` with a proof over this request's method and URL
 * (the one check of the service's own API, src/http/auth.ts `checkPresentedToken`), or a personal access token as
 * `Bearer`; then, only when asked (`cookie`), the service's browser session cookie. A credential that does not check
 * out is null, never an error: the consumer answers its own 401.
 */
export async function authenticate(
  deps: Deps,
  request: Request,
  options: AuthenticateOptions = {},
): Promise<Authenticated | null> {
  const authorization = request.headers.get("authorization");
  if (authorization !== null) return byAuthorization(deps, request, authorization, options);
  return options.cookie ? byCookie(deps, request) : null;
}

/** A JWT has dots; a personal access token is UUID-shaped (src/auth/accounts/pat.ts). */
const PAT_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function byAuthorization(
  deps: Deps,
  request: Request,
  authorization: string,
  options: AuthenticateOptions,
): Promise<Authenticated | null> {
  const sent = presented(authorization);
  if (sent?.scheme === "Bearer" && PAT_SHAPE.test(sent.token)) return byPersonalAccessToken(deps, sent.token);
  const found = await checkPresentedToken(
    {
      authorization,
      // The proof is for the request the consumer received: its method and its URL, as the client sent them.
      proof: (accessToken) =>
        verifyDPoPProof(deps, {
          header: request.headers.get("dpop") ?? undefined,
          method: request.method,
          urls: [request.url],
          accessToken,
        }),
    },
    (token) => verifyFaceToken(deps, token),
  );
  if (!found || "refused" in found) return null;
  const verified = found.payload;
  const live = options.live === true;
  if (live && !(await sessionStands(deps, verified.sid, verified.claims))) return null;
  const org = orgOf(verified);
  const actor = actorOf(verified.claims);
  return {
    user: userOfToken(verified),
    session: verified.sid ? { id: verified.sid, live } : null,
    claims: verified.claims,
    ...(org ? { org: { id: org } } : {}),
    face: verified.face,
    credential: "access-token",
    ...(actor ? { actor } : {}),
  };
}

/** A personal access token: one read (its row and its user's), refused when unknown, expired or its user disabled. */
async function byPersonalAccessToken(deps: Deps, token: string): Promise<Authenticated | null> {
  let user: Awaited<ReturnType<typeof userOfPersonalAccessToken>>;
  try {
    user = await userOfPersonalAccessToken(deps, token);
  } catch (error) {
    if (error instanceof AppError && (error.code === "invalid-pat" || error.code === "disabled-user"))
      return null;
    throw error;
  }
  return {
    user: { id: user.id, roles: user.roles, defaultRole: user.defaultRole },
    session: null,
    claims: null,
    face: "nhost",
    credential: "pat",
  };
}

/**
 * The service's browser session cookie (its hosted pages' sign-in), reaching a consumer on the same site. A browser
 * sends a cookie with a request another site made it send, so an unsafe method is taken only from the same site
 * (`same-site.ts`): a consumer's endpoint never becomes a CSRF door. One read: the session and its user, which is
 * also the liveness check.
 */
async function byCookie(deps: Deps, request: Request): Promise<Authenticated | null> {
  const header = request.headers.get("cookie");
  if (!header) return null;
  const value = parse(header, BROWSER_SESSION_COOKIE)[BROWSER_SESSION_COOKIE];
  if (!value || !sameSite(request)) return null;
  const session = await browserSessionOf(deps, value);
  if (!session) return null;
  const { user } = session;
  return {
    user: { id: user.id, roles: user.roles, defaultRole: user.defaultRole },
    session: { id: session.sessionId, live: true },
    claims: null,
    face: "nhost",
    credential: "cookie",
    ...(session.actor ? { actor: session.actor } : {}),
  };
}
