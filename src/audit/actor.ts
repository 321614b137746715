/**
 * Who acted, as every audit event names it (contract operators.md §4). The actor is the request's, not the call
 * site's: the request context starts it (`user` for a request, `system` for a queue batch or the cron, `worker` for
 * a call through the service binding) and whoever authenticates the caller replaces it once it knows better (the admin
 * secret, a console session, a SCIM token, an access token carrying `act`, the binding's `props.caller`). A call site
 * only says what happened; it never guesses who did it.
 */
export const ACTOR_KINDS = ["user", "admin", "impersonator", "worker", "scim", "system"] as const;

export type ActorKind = (typeof ACTOR_KINDS)[number];

export interface Actor {
  kind: ActorKind;
  /**
   * Who, as far as it is known: the operator's name (an impersonation's `actor`), the impersonator (`act.sub`), the
   * calling Worker (`props.caller`), the SCIM token's organization. Null when the kind says all that is known (a user
   * is the event's subject; the console and the admin secret name no one).
   */
  name?: string | null;
}

export const isActorKind = (value: string): value is ActorKind =>
  (ACTOR_KINDS as readonly string[]).includes(value);

/** The bounded, printable name kept for an actor: a control character could forge a line in a log read as text. */
export function actorName(name: string | null | undefined): string | null {
  if (!name) return null;
  const printable = name.replace(/[\p{Cc}\u2028\u2029]/gu, " ").trim();
  return printable ? printable.slice(0, 200) : null;
}

/**
 * The actor of a request that presented an access token: its user, or the impersonator its `act` claim names (RFC 8693
 * §4.1). Any `act` makes it an impersonation's, as the impersonation's own check reads it; a malformed one names no one.
 */
export function actorOfToken(payload: object): Actor {
  const act = (payload as { act?: unknown }).act;
  if (!act || typeof act !== "object") return { kind: "user" };
  const sub = (act as { sub?: unknown }).sub;
  return { kind: "impersonator", name: typeof sub === "string" ? sub : null };
}
