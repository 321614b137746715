import { actorOfToken } from "../audit/actor";
import { AppError } from "../errors";

/**
 * THE rule of impersonation (contract operators.md §1): a session an operator opened as a user may look, and act in
 * the app, but grant, approve, link or create nothing of the user's account. A session is one when its access token
 * carries an `act` claim (RFC 8693 §4.1: who acts for the subject); the browser's page session says the same through
 * its session row's `actor`. Every door that grants calls `refuseWhileImpersonating` (the API's token check for every
 * write, src/http/auth.ts; the pages' session read, src/browser/session.ts; the Supabase face's; the OAuth2
 * authorization's), so a route added later behind one of them is covered without a line of its own. Plumbing, so any
 * feature may call it.
 */

/** The `amr` value of an impersonation's tokens (RFC 8176 registers none for it: a private value, documented). */
export const IMPERSONATION_AMR = "imp";

/** The Hasura claim naming who acts, inside Hasura's namespace. */
export const HASURA_IMPERSONATOR_CLAIM = "x-hasura-impersonator";

/** Who acts in an impersonated session: what a verified token's `act.sub` says; null for the user's own. */
export function actorOf(payload: { act?: unknown } | null | undefined): string | null {
  // The audit's reading of the claim (any `act` object is an impersonation's), so the two never disagree.
  const actor = payload ? actorOfToken(payload) : null;
  return actor?.kind === "impersonator" ? actor.name || "unknown" : null;
}

/** The 403 every refusal answers: `forbidden`, naming why (`what` was asked). */
export function impersonationRefusal(what?: string): AppError {
  return new AppError(
    "forbidden",
    `an impersonated session may not grant, approve, link or create anything${what ? ` (${what})` : ""}`,
  );
}

/** Throws the refusal when `actor` (a token's `act.sub`, a page session's actor) is set. */
export function refuseWhileImpersonating(actor: string | null | undefined, what?: string): void {
  if (actor) throw impersonationRefusal(what);
}
