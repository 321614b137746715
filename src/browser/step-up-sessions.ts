import { and, eq } from "drizzle-orm";
import { sessions } from "../db/schema";
import type { Deps } from "../http/deps";
import type { AccessTokenPayload } from "../signing-keys/jwt";
import { HASURA_NAMESPACE } from "../signing-keys/jwt";
import { type MethodTimes, methodsOfSessionRow } from "./acr";

/**
 * How a session of the ordinary API was made, read from its row (`method`, named by the flow that signed the person
 * in: src/auth/sign-in/method.ts). The page reads it when a session made elsewhere becomes its
 * cookie (a magic link's landing, a provider's way back, the passkey script); oauth2/interaction.ts when an external login UI
 * completes a request with a bearer.
 */

export interface SessionFacts {
  createdAt: number;
  method: string | null;
}

/** The row of `sessionId`, in its user's shard, while it is that user's; undefined otherwise. */
export async function sessionFacts(
  deps: Deps,
  userId: string,
  sessionId: string,
): Promise<SessionFacts | undefined> {
  return deps.shards
    .ofUser(userId)
    .select({ createdAt: sessions.createdAt, method: sessions.method })
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)))
    .get();
}

/** The methods of a session row, each at the row's creation (or `fallback` when the row is gone). */
export function timesOfSession(facts: SessionFacts | undefined, fallback: number): MethodTimes {
  const at = facts?.createdAt ?? fallback;
  return Object.fromEntries(methodsOfSessionRow(facts?.method ?? null).map((method) => [method, at]));
}

/**
 * What a bearer says of the sign-in behind it (an external login UI's `POST /oauth2/login`): its session's methods at
 * the session's creation (a refreshed token keeps its session's). An elevated token (contract §6) is the first token
 * of a session an elevation made, which is a WebAuthn assertion by one of the user's keys: a passkey at the token's
 * issue (step-up.ts, `recentPhishingResistant`).
 */
export async function bearerMethodTimes(deps: Deps, auth: AccessTokenPayload): Promise<MethodTimes> {
  const issuedAt = auth.iat * 1000;
  if (auth[HASURA_NAMESPACE]?.["x-hasura-auth-elevated"] === auth.sub) return { passkey: issuedAt };
  const facts = auth.sid ? await sessionFacts(deps, auth.sub, auth.sid) : undefined;
  return timesOfSession(facts, issuedAt);
}
