import { generateRandomString, type RandomReader } from "@oslojs/crypto/random";
import { eq } from "drizzle-orm";
import { mfaRecoveryCodes, type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { encrypt } from "../../lib/crypto";
import { credentialsChanged } from "../credential-changes";
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
): Promise<{ uri: string; totpSecret: string }> {
  const user = await mfaUser(deps, userId);
  if (user.activeMfaType === "totp") throw new AppError("totp-already-active");
  const secret = generateTotpSecret();
  const totpSecret = totpSecretText(secret);
  await deps.shards
    .ofUser(user.id)
    .update(users)
    .set({
      totpSecret: await encrypt(deps.config.secrets.encryptionKey, totpSecret),
      totpLastStep: null,
      updatedAt: deps.now(),
    })
    .where(eq(users.id, user.id));
  const account = user.email ?? user.phoneNumber ?? user.id;
  return { uri: totpUri(deps.config.mfa.totpIssuer, account, secret), totpSecret };
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
    return;
  }
  // Deactivation works with AUTH_MFA_ENABLED switched off too: sign-in still asks an active TOTP (complete-sign-in.ts), so
  // the user must be able to turn it off.
  const user = await requireRegisteredUser(deps, userId);
  if (user.activeMfaType !== "totp") throw new AppError("disabled-mfa-totp");
  if (!(await acceptSecondFactor(deps, user, input.code))) throw new AppError("invalid-totp");
  const db = deps.shards.ofUser(userId);
  await db.batch([
    db
      .update(users)
      .set({
        activeMfaType: null,
        totpSecret: null,
        totpLastStep: null,
        totpEnabledAt: null,
        credentialsChangedAt: deps.now(),
        updatedAt: deps.now(),
      })
      .where(eq(users.id, userId)),
    db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)),
  ]);
  deps.audit({ type: "mfa.disabled", userId, detail: { type: "totp" } });
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
