import { and, eq, ne, sql } from "drizzle-orm";
import { idForUser } from "../../db/routed-ids";
import { mfaFactors, mfaTickets, type UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { toE164 } from "../../lib/phone";
import { onFaultPutBack, type PutBack, putBackWith } from "../../lib/put-back";
import { checkOneTimeCode } from "../one-time-codes";
import {
  emailStepScope,
  mailEmailFactorCode,
  PHONE_CODE_LIFETIME_MS,
  phoneFactorScope,
  syncMfaType,
  textPhoneFactorCode,
} from "../second-step";
import { requireRegisteredUser } from "../users";
import { acceptEmailCode, acceptPhoneCode, acceptTotpCode } from "./second-factor";
import { activateTotp, dropTotp, startTotpSetup } from "./totp-setup";
import { MAX_MFA_ATTEMPTS } from "./totp-sign-in";

/**
 * A user's second factors as a list (contract supabase.md §2, "Factors"), for the Supabase face's `mfa` namespace and
 * its admin: the one TOTP factor (its secret on the user's row, as the Nhost face has always kept it, so a factor made
 * through either face is the other's too) and phone factors (codes by SMS). A challenge is a second-step ticket
 * (`mfa_tickets`) bound to its factor; its code is checked by the same guard and lockout as the Nhost face's.
 */

/**
 * `webauthn`: a key that is a second factor only (./webauthn-factors.ts); `email`: the email step, made by the user's
 * choice (./mfa-choice.ts), its codes mailed to the verified address.
 */
export type FactorType = "totp" | "phone" | "webauthn" | "email";

export interface Factor {
  id: string;
  type: FactorType;
  friendlyName: string | null;
  status: "verified" | "unverified";
  phone: string | null;
  createdAt: number;
  updatedAt: number;
}

/** GoTrue's limit of factors a user holds (`MaxEnrolledFactors`). */
const MAX_FACTORS = 10;
/** GoTrue's `MFA_CHALLENGE_EXPIRY_DURATION` default, and the SMS code's life. */
const CHALLENGE_LIFETIME_MS = PHONE_CODE_LIFETIME_MS;

/** A factor's refusal, worded by the face (GoTrue's codes). */
export class FactorError extends Error {
  constructor(
    readonly reason:
      | "name-conflict"
      | "too-many"
      | "verified-exists"
      | "invalid-phone"
      | "challenge-not-found"
      | "challenge-expired"
      | "wrong-code",
  ) {
    super(reason);
  }
}

const phoneScope = phoneFactorScope;
/** The ticket's hash names its factor too: a challenge id given with another factor finds nothing. */
const challengeHash = (factorId: string, challengeId: string) =>
  sha256Hex(`mfa-challenge:${factorId}:${challengeId}`);

/** A listed factor: a TOTP factor's state is the user's row's (the Nhost face's switch), a phone factor's its own. */
export function toFactor(
  row: {
    id: string;
    factorType: string;
    friendlyName: string | null;
    status: string;
    phone: string | null;
    createdAt: number;
    updatedAt: number;
  },
  user: { activeMfaType: string | null; totpEnabledAt: number | null },
): Factor {
  const totp = row.factorType === "totp";
  return {
    id: row.id,
    type: row.factorType as FactorType,
    friendlyName: row.friendlyName,
    status: (totp
      ? user.activeMfaType === "totp"
        ? "verified"
        : "unverified"
      : row.status) as Factor["status"],
    phone: row.phone,
    createdAt: row.createdAt,
    updatedAt: totp ? Math.max(row.updatedAt, user.totpEnabledAt ?? 0) : row.updatedAt,
  };
}

/**
 * The user's factors, oldest first. The TOTP factor is listed while its row still holds the user's current secret;
 * a secret set with no factor named for it (an import writes the user's row alone) gets one here, and a row whose
 * secret was replaced or cleared (a reset, the Nhost face turning TOTP off) goes.
 */
export async function factorsOf(deps: Deps, user: UserRow): Promise<Factor[]> {
  const db = deps.shards.ofUser(user.id);
  const rows = await db.select().from(mfaFactors).where(eq(mfaFactors.userId, user.id)).all();
  const current = rows.filter((r) => r.factorType !== "totp" || r.secret === user.totpSecret);
  const stale = rows.length - current.length;
  if (user.totpSecret && !current.some((r) => r.factorType === "totp")) {
    const now = user.totpEnabledAt ?? deps.now();
    const adopted = {
      id: crypto.randomUUID(),
      userId: user.id,
      factorType: "totp",
      friendlyName: null,
      status: "unverified",
      phone: null,
      secret: user.totpSecret,
      createdAt: now,
      updatedAt: now,
    };
    await db.batch([
      db.delete(mfaFactors).where(and(eq(mfaFactors.userId, user.id), eq(mfaFactors.factorType, "totp"))),
      db.insert(mfaFactors).values(adopted),
    ]);
    current.push(adopted);
  } else if (stale > 0) {
    await db
      .delete(mfaFactors)
      .where(
        and(
          eq(mfaFactors.userId, user.id),
          eq(mfaFactors.factorType, "totp"),
          user.totpSecret ? ne(mfaFactors.secret, user.totpSecret) : sql`1`,
        ),
      );
  }
  return current.map((r) => toFactor(r, user)).sort((a, b) => a.createdAt - b.createdAt);
}

/** The user's factor by its id, or null (another user's factor is none of theirs). */
export async function factorOf(deps: Deps, user: UserRow, factorId: string): Promise<Factor | null> {
  return (await factorsOf(deps, user)).find((f) => f.id === factorId) ?? null;
}

/** GoTrue's checks before a new factor: names unique per user, at most ten factors. */
export function checkRoom(factors: Factor[], friendlyName: string | null): void {
  if (friendlyName && factors.some((f) => f.friendlyName === friendlyName))
    throw new FactorError("name-conflict");
  if (factors.length >= MAX_FACTORS) throw new FactorError("too-many");
}

/**
 * A new TOTP factor: the Nhost face's setup (a new secret, unverified until a code of it is verified). The user holds
 * one TOTP factor, as on the Nhost face: a verified one is refused, an unverified one is replaced.
 */
export async function enrollTotp(
  deps: Deps,
  userId: string,
  input: { friendlyName: string | null; issuer?: string },
): Promise<{ factorId: string; uri: string; secret: string }> {
  const user = await requireRegisteredUser(deps, userId);
  const factors = await factorsOf(deps, user);
  if (user.activeMfaType === "totp") throw new FactorError("too-many");
  checkRoom(
    factors.filter((f) => f.type !== "totp"),
    input.friendlyName,
  );
  const setup = await startTotpSetup(deps, userId, {
    friendlyName: input.friendlyName,
    issuer: input.issuer,
  });
  return { factorId: setup.factorId, uri: setup.uri, secret: setup.totpSecret };
}

/** A new phone factor (unverified until a code sent to it is verified); an unverified one of the same number goes. */
export async function enrollPhone(
  deps: Deps,
  userId: string,
  input: { phone: string; friendlyName: string | null },
): Promise<Factor> {
  // The same switch as TOTP's (AUTH_MFA_ENABLED): second factors are offered, or not.
  if (!deps.config.mfa.enabled) throw new AppError("disabled-endpoint");
  const phone = toE164(input.phone);
  if (!phone) throw new FactorError("invalid-phone");
  const user = await requireRegisteredUser(deps, userId);
  const factors = await factorsOf(deps, user);
  const same = factors.filter((f) => f.type === "phone" && f.phone === phone);
  if (same.some((f) => f.status === "verified")) throw new FactorError("verified-exists");
  checkRoom(
    factors.filter((f) => !same.includes(f)),
    input.friendlyName,
  );
  const now = deps.now();
  const factor: Factor = {
    id: crypto.randomUUID(),
    type: "phone",
    friendlyName: input.friendlyName,
    status: "unverified",
    phone,
    createdAt: now,
    updatedAt: now,
  };
  const db = deps.shards.ofUser(userId);
  await db.batch([
    db
      .delete(mfaFactors)
      .where(
        and(eq(mfaFactors.userId, userId), eq(mfaFactors.phone, phone), eq(mfaFactors.status, "unverified")),
      ),
    db.insert(mfaFactors).values({ ...factor, userId, factorType: "phone" }),
  ]);
  return factor;
}

/**
 * A challenge of the user's factor: a ticket of five minutes and five tries; for a phone factor a code is sent by
 * SMS (a new challenge's code replaces the one before).
 */
export async function challengeFactor(
  deps: Deps,
  user: UserRow,
  factor: Factor,
): Promise<{ id: string; expiresAt: number }> {
  const id = idForUser(user.id);
  const expiresAt = deps.now() + CHALLENGE_LIFETIME_MS;
  if (factor.type === "phone" && factor.phone) {
    await textPhoneFactorCode(deps, user, { factorId: factor.id, phone: factor.phone });
  }
  // The email factor's code, bound to this challenge (a code mailed for another challenge or ticket is wrong).
  if (factor.type === "email") await mailEmailFactorCode(deps, user, await challengeHash(factor.id, id));
  await deps.shards
    .ofUser(user.id)
    .insert(mfaTickets)
    .values({ ticketHash: await challengeHash(factor.id, id), userId: user.id, expiresAt });
  return { id, expiresAt };
}

/**
 * A challenge answered: one try taken from it first (so its cap holds under parallel requests), the code checked by
 * the user's guard (and lockout, for a verified factor; a TOTP code is used once), and the challenge consumed by the
 * statement that deletes it, so of two right answers one wins. An unverified factor becomes verified (TOTP: the
 * user's TOTP is then active, on the Nhost face too).
 */
export async function verifyFactor(
  deps: Deps,
  user: UserRow,
  factor: Factor,
  input: { challengeId: string; code: string },
): Promise<PutBack> {
  const db = deps.shards.ofUser(user.id);
  const hash = await challengeHash(factor.id, input.challengeId);
  const attempt = await db
    .update(mfaTickets)
    .set({ attempts: sql`${mfaTickets.attempts} + 1` })
    .where(and(eq(mfaTickets.ticketHash, hash), eq(mfaTickets.userId, user.id)))
    .returning({ expiresAt: mfaTickets.expiresAt, attempts: mfaTickets.attempts })
    .get();
  if (!attempt) throw new FactorError("challenge-not-found");
  if (attempt.expiresAt <= deps.now() || attempt.attempts > MAX_MFA_ATTEMPTS) {
    await db.delete(mfaTickets).where(eq(mfaTickets.ticketHash, hash));
    throw new FactorError("challenge-expired");
  }
  const verified = factor.status === "verified";
  const right =
    factor.type === "totp"
      ? await acceptTotpCode(deps, user, input.code)
      : factor.type === "email"
        ? await acceptEmailCode(deps, user, () => checkOneTimeCode(deps, emailStepScope(hash), input.code))
        : await acceptPhoneCode(
            deps,
            user,
            () => checkOneTimeCode(deps, phoneScope(factor.id), input.code),
            verified,
          );
  if (!right) throw new FactorError("wrong-code");
  const consumed = await db.delete(mfaTickets).where(eq(mfaTickets.ticketHash, hash)).returning().get();
  if (!consumed) throw new FactorError("challenge-not-found");
  // A fault after the challenge is spent (here, or in the caller's session) puts it back: the person answers it again
  // with the factor's next code, instead of asking for a new challenge (a TOTP code once accepted stays spent).
  const taken: PutBack = {
    putBack: putBackWith("factor challenge", () =>
      db.insert(mfaTickets).values(consumed).onConflictDoNothing().run(),
    ),
  };
  if (verified) return taken;
  return onFaultPutBack(taken, async () => {
    if (factor.type === "totp") {
      await activateTotp(deps, user.id);
      return taken;
    }
    // The Nhost face's `activeMfaType` becomes `sms` (unless TOTP is on), in the same batch (../second-step.ts).
    await db.batch([
      db
        .update(mfaFactors)
        .set({ status: "verified", updatedAt: deps.now() })
        .where(eq(mfaFactors.id, factor.id)),
      syncMfaType(db, user.id),
    ]);
    deps.audit({ type: "mfa.enabled", userId: user.id, detail: { type: "phone", factorId: factor.id } });
    return taken;
  });
}

/** The factor removed (the caller checked the right to: GoTrue's aal2, or the service role). */
export async function removeFactor(deps: Deps, userId: string, factor: Factor): Promise<void> {
  if (factor.type === "totp") {
    await dropTotp(deps, userId);
    return;
  }
  const db = deps.shards.ofUser(userId);
  await db.batch([db.delete(mfaFactors).where(eq(mfaFactors.id, factor.id)), syncMfaType(db, userId)]);
  deps.audit({ type: "mfa.disabled", userId, detail: { type: factor.type, factorId: factor.id } });
}
