import { and, eq, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import { type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { spentUnlessPutBack } from "../../lib/put-back";
import { dropFactorsFromBeforeProof, endOutstandingGrants, proveEmail } from "../credential-reset";
import { changeIdentifiers } from "../identifier-changes";
import type { Session } from "../new-sessions";
import { type SignInScope, startSession } from "../sign-in";
import { findUserById } from "../users";
import { issueExchangeCode } from "./exchange-codes";
import { type ConsumedTicket, consumeTicket, TICKET_TYPES, type TicketType } from "./tickets";

type Effect = (deps: Deps, user: UserRow) => Promise<UserRow | undefined>;

/**
 * The address changes only now, when the link sent to the new address is followed (contract §3.4). The account's
 * recovery channel changed: links mailed to the old address, PATs and the other sessions end.
 */
const confirmEmailChange: Effect = async (deps, user) => {
  const { newEmail } = user;
  if (!newEmail) return undefined;
  let updated: UserRow | undefined;
  try {
    // The new address is claimed in the directory now, the old one given back once the row has changed.
    updated = await changeIdentifiers(
      deps,
      user.id,
      {
        added: [{ kind: "email", value: newEmail }],
        removed: user.email && user.email !== newEmail ? [{ kind: "email", value: user.email }] : [],
      },
      () =>
        deps.shards
          .ofUser(user.id)
          .update(users)
          .set({
            email: newEmail,
            newEmail: null,
            emailVerified: true,
            emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, ${deps.now()})`,
            updatedAt: deps.now(),
          })
          // Only the address that was claimed: a newer change request in between makes this link a stale one.
          .where(and(eq(users.id, user.id), eq(users.newEmail, newEmail)))
          .returning()
          .get(),
      () => new AppError("email-already-in-use"),
    );
  } catch (error) {
    // Someone took the address between the request and the confirmation (unique index).
    if (isUniqueViolation(error)) throw new AppError("email-already-in-use");
    throw error;
  }
  if (updated) {
    await endOutstandingGrants(deps, user.id);
    deps.audit({ type: "email.change", userId: user.id, detail: { from: user.email, to: updated.email } });
  }
  return updated;
};

/** Following a link proves the user reads that mailbox (credential-reset.ts says what the first proof wipes). */
const EFFECTS: Record<TicketType, Effect> = {
  verifyEmail: (deps, user) => proveEmail(deps, user, "sign-up-verification"),
  passwordlessEmail: (deps, user) => proveEmail(deps, user, "inbox"),
  // The link signs the user in; the app then sets the new password with that session (POST /user/password).
  passwordReset: async (deps, user) => {
    deps.audit({ type: "password.reset", userId: user.id, detail: { step: "link-followed" } });
    const proven = await proveEmail(deps, user, "inbox");
    await dropFactorsFromBeforeProof(deps, user.id);
    return findUserById(deps.shards, user.id) ?? proven;
  },
  emailConfirmChange: confirmEmailChange,
};

/**
 * What a followed link yields, with the `type` the redirect carries: a session; for a PKCE app a one-time code; or,
 * when the user has a second factor (TOTP, a phone factor), an `mfaTotp:` ticket for `POST /signin/mfa/totp` — a
 * link is one factor, like a password, and must not skip the second (docs/decisions.md).
 */
export type VerifiedTicket = { type: string } & (
  | { session: Session }
  | { code: string }
  | { mfaTicket: string }
);

/**
 * `GET /verify` (contract §8): consumes the ticket atomically, applies its effect and starts a session, or, when
 * the app asked with a PKCE challenge, issues a code that `POST /token/exchange` turns into the session. A face
 * names the ticket types its call accepts (`accepted`: a ticket of another type is refused, not consumed), and
 * whether a PKCE ticket still yields its code (`direct`: the ticket itself was posted, by whoever read the mail).
 */
export async function verifyTicket(
  scope: SignInScope,
  ticket: string,
  { accepted, direct = false }: { accepted?: readonly TicketType[]; direct?: boolean } = {},
): Promise<VerifiedTicket> {
  const { deps } = scope;
  const type = ticket.slice(0, Math.max(0, ticket.indexOf(":")));
  if (accepted && !(accepted as readonly string[]).includes(type)) throw new AppError("invalid-ticket");
  const consumed = await consumeTicket(deps, ticket);
  if (!consumed) throw new AppError("invalid-ticket");
  // A fault from here on puts the ticket back: the link the user clicked works again for the 503's retry. Anything
  // else spends it: its claimed row is deleted after the answer.
  return spentUnlessPutBack(deps.background, "ticket", consumed, () =>
    applyTicket(scope, direct ? { ...consumed, codeChallenge: null } : consumed),
  );
}

/** What a consumed ticket (followed link, or its mailed code: mailed-codes.ts) does and yields. */
export async function applyTicket(
  scope: SignInScope,
  consumed: Omit<ConsumedTicket, "putBack" | "spend">,
): Promise<VerifiedTicket> {
  const { deps } = scope;
  const owner = await findUserById(deps.shards, consumed.userId);
  if (!owner) throw new AppError("invalid-ticket");
  // Before the ticket's effect: a disabled user's link changes nothing (an email change was applied, then refused).
  if (owner.disabled) throw new AppError("disabled-user");
  const user = await EFFECTS[consumed.type](deps, owner);
  if (!user) throw new AppError("invalid-ticket");
  if (user.disabled) throw new AppError("disabled-user");
  const type = TICKET_TYPES[consumed.type].redirectType;
  if (consumed.codeChallenge) {
    return { code: await issueExchangeCode(deps, user.id, consumed.codeChallenge), type };
  }
  // The second-factor gate of every sign-in (sign-in/pipeline.ts): the Nhost face gets the TOTP step's ticket (a
  // phone factor's code texted) or, for a `webauthn` factor alone, a refusal; a face that steps sessions up
  // afterwards (GoTrue's aal1, sign-in/scope.ts) gets a session short of the second factor, marked so.
  const started = await startSession(scope, { user, mfaGate: true });
  if (started.session) return { session: started.session, type };
  if (started.mfa) return { mfaTicket: started.mfa.ticket, type };
  throw new AppError("invalid-ticket");
}
