import type { Deps } from "../http/deps";
import { HASURA_NAMESPACE } from "../signing-keys/jwt";
import { type FaceToken, verifyFaceToken } from "./face-tokens";
import { sessionStands } from "./liveness";
import type { Authenticated, TokenVerdict, VerifyTokenOptions } from "./types";

/**
 * `verifyToken`: a session access token that did not come in a `Request` (a queue message, a WebSocket's first frame)
 * checked as `authenticate` checks one. A DPoP-bound token is active here with its `cnf` in the claims: with no
 * request there is no proof to check, and the caller who holds one checks it (RFC 7662 §2.2 answers the same way).
 * Anything that is not a token is `{ active: false }`, never an error.
 */
export async function verifyToken(
  deps: Deps,
  token: unknown,
  options: VerifyTokenOptions = {},
): Promise<TokenVerdict> {
  if (typeof token !== "string" || token.length === 0) return { active: false, reason: "invalid-token" };
  const verified = await verifyFaceToken(deps, token);
  if (!verified) return { active: false, reason: "invalid-token" };
  if (options.audience !== undefined && !audiencesOf(verified.claims).includes(options.audience)) {
    return { active: false, reason: "audience" };
  }
  if (options.live && !(await sessionStands(deps, verified.sid, verified.claims))) {
    return { active: false, reason: "session-ended" };
  }
  const orgId = orgOf(verified);
  return {
    active: true,
    claims: verified.claims,
    userId: verified.sub,
    ...(verified.sid ? { sessionId: verified.sid } : {}),
    ...(orgId ? { orgId } : {}),
    face: verified.face,
  };
}

function audiencesOf(claims: Record<string, unknown>): string[] {
  const { aud } = claims;
  if (typeof aud === "string") return [aud];
  return Array.isArray(aud) ? aud.filter((value): value is string => typeof value === "string") : [];
}

export const orgOf = (verified: FaceToken): string | undefined =>
  typeof verified.claims.org_id === "string" ? verified.claims.org_id : undefined;

/** What an access token says of its user: the Hasura claims both faces carry (none before a second factor). */
export function userOfToken(verified: FaceToken): Authenticated["user"] {
  const hasura = verified.claims[HASURA_NAMESPACE] as Record<string, unknown> | undefined;
  const allowed = hasura?.["x-hasura-allowed-roles"];
  const named = hasura?.["x-hasura-default-role"];
  return {
    id: verified.sub,
    roles: Array.isArray(allowed) ? allowed.filter((role): role is string => typeof role === "string") : [],
    defaultRole: typeof named === "string" ? named : "",
  };
}
