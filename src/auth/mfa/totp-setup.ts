import { generateRandomString, type RandomReader } from "@oslojs/crypto/random";
import { and, eq } from "drizzle-orm";
import { mfaFactors, mfaRecoveryCodes, type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { encrypt } from "../../lib/crypto";
import { credentialsChanged } from "../credential-changes";
import { mfaTypeWithoutTotp } from "../second-step";
import { requireRegisteredUser } from "../users";
import { qrPngDataUrl } from "./qr-png";
import { acceptSecondFactor, acceptTotpCode, recoveryCodeHash } from "./second-factor";
import { generateTotpSecret, totpSecretText, totpUri } from "./totp";

async function mfaUser(deps: Deps, userId: string): Promise<UserRow> {
  if (!deps.config.mfa.enabled) throw new AppError("disabled-endpoint");
  return requireRegisteredUser(deps, userId);
}

/**
 * changeUserMfa (`GET /mfa/totp/generate`): a new secret, stored encrypted until activation, and its QR code. While
 * TOTP is active a new secret would silently replace the one in the user's app, so that is refused.
 */
export async function generateTotp(
  deps: Deps,
  userId: string,
): Promise<{ imageUrl: string; totpSecret: string }> {
  const { uri, totpSecret } = await startTotpSetup(deps, userId);
  return { imageUrl: qrPngDataUrl(uri), totpSecret };
}

/**
 * `generateTotp` without the picture: the `otpauth://` URI itself, for a page that draws its own QR code (the
 * account center's, inline, under a CSP that loads no images) and offers the URI as a link on a phone.
 */
export async function startTotpSetup(
  deps: Deps,
  userId: string,
  { friendlyName = null, issuer }: { friendlyName?: string | null; issuer?: string } = {},
): Promise<{ uri: string; totpSecret: string; factorId: string }> {
  const user = await mfaUser(deps, userId);
  if (user.activeMfaType === "totp") throw new AppError("totp-already-active");
  const secret = generateTotpSecret();
  const totpSecret = totpSecretText(secret);
  const sealed = await encrypt(deps.config.secrets.encryptionKey, totpSecret);
  const now = deps.now();
  const db = deps.shards.ofUser(user.id);
  // The new secret is the user's one TOTP factor, named in the same batch (factors.ts): an earlier unverified one goes.
  const factorId = crypto.randomUUID();
  await db.batch([
    db
      .update(users)
      .set({ totpSecret: sealed, totpLastStep: null, updatedAt: now })
      .where(eq(users.id, user.id)),
    db.delete(mfaFactors).where(and(eq(mfaFactors.userId, user.id), eq(mfaFactors.factorType, "totp"))),
    db.insert(mfaFactors).values({
      id: factorId,
      userId: user.id,
      factorType: "totp",
      friendlyName,
      secret: sealed,
      createdAt: now,
      updatedAt: now,
    }),
  ]);
  const account = user.email ?? user.phoneNumber ?? user.id;
  return { uri: totpUri(issuer ?? deps.config.mfa.totpIssuer, account, secret), totpSecret, factorId };
}

/** The generated secret becomes the active second factor (its code was just accepted by the caller). */
export async function activateTotp(deps: Deps, userId: string): Promise<void> {
  await deps.shards
    .ofUser(userId)
    .update(users)
    .set({
      activeMfaType: "totp",
      totpEnabledAt: deps.now(),
      credentialsChangedAt: deps.now(),
      updatedAt: deps.now(),
    })
    .where(eq(users.id, userId));
  deps.audit({ type: "mfa.enabled", userId, detail: { type: "totp" } });
}

/** TOTP off: the secret, its last step and the recovery codes forgotten (the caller checked the right to). */
export async function dropTotp(deps: Deps, userId: string): Promise<void> {
  const db = deps.shards.ofUser(userId);
  await db.batch([
    db
      .update(users)
      .set({
        // A verified phone factor is the second factor still (`sms`, ../second-step.ts).
        activeMfaType: mfaTypeWithoutTotp(userId),
        totpSecret: null,
        totpLastStep: null,
        totpEnabledAt: null,
        credentialsChangedAt: deps.now(),
        updatedAt: deps.now(),
      })
      .where(eq(users.id, userId)),
    db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)),
    db.delete(mfaFactors).where(and(eq(mfaFactors.userId, userId), eq(mfaFactors.factorType, "totp"))),
  ]);
  deps.audit({ type: "mfa.disabled", userId, detail: { type: "totp" } });
}

/**
 * verifyChangeUserMfa (`POST /user/mfa`): `totp` activates the generated secret with a code from it; `""` or absent
 * deactivates with a code (or a recovery code), forgetting the secret and the recovery codes.
 */
export async function changeMfa(
  deps: Deps,
  userId: string,
  input: { code: string; activeMfaType?: "totp" | "" },
): Promise<void> {
  if (input.activeMfaType === "totp") {
    const user = await mfaUser(deps, userId);
    if (user.activeMfaType === "totp") throw new AppError("totp-already-active");
    if (!user.totpSecret) throw new AppError("no-totp-secret");
    if (!(await acceptTotpCode(deps, user, input.code))) throw new AppError("invalid-totp");
    await activateTotp(deps, userId);
    return;
  }
  // Deactivation works with AUTH_MFA_ENABLED switched off too: sign-in still asks an active TOTP (complete-sign-in.ts), so
  // the user must be able to turn it off.
  const user = await requireRegisteredUser(deps, userId);
  if (user.activeMfaType !== "totp") throw new AppError("disabled-mfa-totp");
  if (!(await acceptSecondFactor(deps, user, input.code))) throw new AppError("invalid-totp");
  await dropTotp(deps, userId);
}

const RECOVERY_CODE_COUNT = 10;
/** No 0/o, 1/l/i: codes are read off paper. 10 characters of 31 ≈ 49.5 bits each. */
const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
const random: RandomReader = { read: (bytes) => crypto.getRandomValues(bytes) };

/**
 * `POST /mfa/recovery-codes` (improvement; docs/decisions.md): with a current TOTP code, ten new one-time codes,
 * shown once, replacing any earlier set. Each works once in place of the TOTP code at sign-in.
 */
export async function createRecoveryCodes(deps: Deps, userId: string, code: string): Promise<string[]> {
  const user = await mfaUser(deps, userId);
  if (user.activeMfaType !== "totp") throw new AppError("disabled-mfa-totp");
  if (!(await acceptTotpCode(deps, user, code))) throw new AppError("invalid-totp");
  return issueRecoveryCodes(deps, userId);
}

/**
 * Ten new recovery codes replacing any earlier set, with no check of its own: for a caller that has just proven the
 * second factor itself (`createRecoveryCodes` above; the account center right after activating TOTP with a code,
 * whose time step is spent, so asking a second code would make the person wait for the next one).
 */
export async function issueRecoveryCodes(deps: Deps, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const raw = generateRandomString(random, RECOVERY_ALPHABET, 10);
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
  const hashes = await Promise.all(codes.map((c) => recoveryCodeHash(deps, userId, c)));
  const db = deps.shards.ofUser(userId);
  await db.batch([
    db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)),
    db.insert(mfaRecoveryCodes).values(hashes.map((codeHash) => ({ codeHash, userId }))),
    credentialsChanged(db, userId, deps.now()),
  ]);
  return codes;
}
