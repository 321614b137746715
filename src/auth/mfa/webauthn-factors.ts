import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { and, eq } from "drizzle-orm";
import { idForUser } from "../../db/routed-ids";
import { mfaFactors, mfaTickets, type UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { requireRegisteredUser } from "../users";
import {
  answeredChallenge,
  CeremonyError,
  type FactorKey,
  factorCreationOptions,
  factorRequestOptions,
  verifyFactorAssertion,
  verifyFactorCreation,
} from "../webauthn";
import { checkRoom, type Factor, FactorError, factorsOf } from "./factors";

/**
 * `webauthn` factors (contract supabase.md §2, GoTrue's `webauthn` factor type): a WebAuthn key that is a second
 * factor only, kept by its factor row (`mfa_factors.secret` holds its public key and signature counter as JSON:
 * nothing secret, and no new table), apart from the security keys: it is no passkey and signs nobody in, as GoTrue
 * keeps them apart (docs/decisions.md, "Issue 43: webauthn factors"). An unverified factor's challenge creates its
 * key; a verified factor's challenge asks its key for an assertion. A challenge is two things taken once: the
 * GoTrue challenge (a ticket in `mfa_tickets`, with its five minutes) and the WebAuthn ceremony in its Durable
 * Object; the ticket's hash names the WebAuthn challenge, so a response answering another challenge finds none.
 */

/** GoTrue's `MFA_CHALLENGE_EXPIRY_DURATION`, as the other factors' challenges (and the ceremony's own timeout). */
const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;

const ticketHash = (factorId: string, challengeId: string, webauthnChallenge: string) =>
  sha256Hex(`mfa-webauthn:${factorId}:${challengeId}:${webauthnChallenge}`);

/** A new unverified `webauthn` factor: a name for the key its first challenge will create. */
export async function enrollWebauthn(
  deps: Deps,
  userId: string,
  input: { friendlyName: string | null },
): Promise<Factor> {
  if (!deps.config.mfa.enabled || !deps.config.webauthn.enabled) throw new AppError("disabled-endpoint");
  const user = await requireRegisteredUser(deps, userId);
  checkRoom(await factorsOf(deps, user), input.friendlyName);
  const now = deps.now();
  const factor: Factor = {
    id: crypto.randomUUID(),
    type: "webauthn",
    friendlyName: input.friendlyName,
    status: "unverified",
    phone: null,
    createdAt: now,
    updatedAt: now,
  };
  await deps.shards
    .ofUser(userId)
    .insert(mfaFactors)
    .values({ ...factor, userId, factorType: "webauthn" });
  return factor;
}

/** The keys of the user's verified `webauthn` factors, by factor id. */
export async function factorKeys(deps: Deps, userId: string): Promise<Map<string, FactorKey>> {
  const rows = await deps.shards
    .ofUser(userId)
    .select({ id: mfaFactors.id, secret: mfaFactors.secret })
    .from(mfaFactors)
    .where(and(eq(mfaFactors.userId, userId), eq(mfaFactors.factorType, "webauthn")))
    .all();
  return new Map(rows.flatMap((r) => (r.secret ? [[r.id, JSON.parse(r.secret) as FactorKey]] : [])));
}

export type WebauthnChallenge = { id: string; expiresAt: number } & (
  | { type: "create"; options: PublicKeyCredentialCreationOptionsJSON }
  | { type: "request"; options: PublicKeyCredentialRequestOptionsJSON }
);

/** A challenge of the user's `webauthn` factor: `create` while it has no key, `request` (its key only) after. */
export async function challengeWebauthnFactor(
  deps: Deps,
  user: UserRow,
  factor: Factor,
): Promise<WebauthnChallenge> {
  const keys = await factorKeys(deps, user.id);
  const key = keys.get(factor.id);
  const id = idForUser(user.id);
  const expiresAt = deps.now() + CHALLENGE_LIFETIME_MS;
  const name = user.email ?? user.phoneNumber ?? user.id;
  const started: WebauthnChallenge =
    factor.status === "verified" && key
      ? {
          id,
          expiresAt,
          type: "request",
          options: await factorRequestOptions(deps, user.id, factor.id, key),
        }
      : {
          id,
          expiresAt,
          type: "create",
          options: await factorCreationOptions(
            deps,
            { id: user.id, name, displayName: user.displayName || name },
            factor.id,
            [...keys.values()],
          ),
        };
  await deps.shards
    .ofUser(user.id)
    .insert(mfaTickets)
    .values({
      ticketHash: await ticketHash(factor.id, id, started.options.challenge),
      userId: user.id,
      expiresAt,
    });
  return started;
}

export type WebauthnAnswer =
  | { type: "create"; response: RegistrationResponseJSON }
  | { type: "request"; response: AuthenticationResponseJSON };

/**
 * A challenge answered: the ticket is consumed first (the statement that deletes it: of two answers one finds it),
 * then the ceremony is taken and the response verified. `create` stores the new key and verifies the factor;
 * `request` checks an assertion by the factor's key and stores its new counter, conditionally on the one checked.
 */
export async function verifyWebauthnFactor(
  deps: Deps,
  user: UserRow,
  factor: Factor,
  input: { challengeId: string } & WebauthnAnswer,
): Promise<void> {
  const db = deps.shards.ofUser(user.id);
  const answered = answeredChallenge(input.response.response.clientDataJSON);
  if (!answered) throw new FactorError("challenge-not-found");
  const hash = await ticketHash(factor.id, input.challengeId, answered);
  const ticket = await db
    .delete(mfaTickets)
    .where(and(eq(mfaTickets.ticketHash, hash), eq(mfaTickets.userId, user.id)))
    .returning({ expiresAt: mfaTickets.expiresAt })
    .get();
  if (!ticket) throw new FactorError("challenge-not-found");
  if (ticket.expiresAt <= deps.now()) throw new FactorError("challenge-expired");
  const owner = { userId: user.id, factorId: factor.id };
  try {
    if (input.type === "create") {
      if (factor.status === "verified") throw new FactorError("wrong-code");
      const key = await verifyFactorCreation(deps, owner, input.response);
      const made = await db
        .update(mfaFactors)
        .set({ status: "verified", secret: JSON.stringify(key), updatedAt: deps.now() })
        .where(and(eq(mfaFactors.id, factor.id), eq(mfaFactors.status, "unverified")))
        .returning({ id: mfaFactors.id })
        .get();
      if (!made) throw new FactorError("challenge-not-found");
      deps.audit({ type: "mfa.enabled", userId: user.id, detail: { type: "webauthn", factorId: factor.id } });
      return;
    }
    const key = factor.status === "verified" ? (await factorKeys(deps, user.id)).get(factor.id) : undefined;
    if (!key) throw new FactorError("wrong-code");
    const counter = await verifyFactorAssertion(deps, owner, input.response, key);
    if (counter === 0 && key.counter === 0) return;
    const moved = await db
      .update(mfaFactors)
      .set({ secret: JSON.stringify({ ...key, counter }) })
      .where(and(eq(mfaFactors.id, factor.id), eq(mfaFactors.secret, JSON.stringify(key))))
      .returning({ id: mfaFactors.id })
      .get();
    if (!moved) throw new FactorError("wrong-code");
  } catch (error) {
    if (error instanceof CeremonyError) {
      throw new FactorError(error.stage === "challenge" ? "challenge-not-found" : "wrong-code");
    }
    throw error;
  }
}
