import { eq } from "drizzle-orm";
import {
  renewSession,
  revokeSession,
  type SignInScope,
  signInEmailPassword,
  startSession,
  verifySignInMfaTotp,
} from "../auth";
import type { SignInMethod } from "../browser/acr";
import type { Abilities } from "../browser/step-up";
import { sessionFacts } from "../browser/step-up-sessions";
import { securityKeys, type UserRow } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";

/**
 * The proofs of the re-authentication step (browser/step-up.ts), each checked against ONE user: the one already signed
 * in to this browser. Nothing here signs anyone in: each proof goes through the ordinary API's own check (the password,
 * a WebAuthn assertion, a TOTP code, with their rate limits, lockouts and guess caps), and the session that check makes
 * is revoked at once; what the caller keeps is only the method, added to the browser session (src/browser/session.ts,
 * `raiseBrowserSession`). Independent of authorization requests: the account center (contract §13) uses them too.
 */

/** A passkey's session older than this is no proof of a ceremony just performed on this page. */
const PASSKEY_PROOF_WINDOW_MS = 5 * 60_000;

/** What the person can re-authenticate with here. */
export async function abilitiesOf(deps: Deps, user: UserRow): Promise<Abilities> {
  const key = deps.config.webauthn.enabled
    ? await deps.shards
        .ofUser(user.id)
        .select({ id: securityKeys.id })
        .from(securityKeys)
        .where(eq(securityKeys.userId, user.id))
        .limit(1)
        .get()
    : undefined;
  return {
    passkey: key !== undefined,
    password: Boolean(user.passwordHash && user.email),
    totp: user.activeMfaType === "totp" && user.totpSecret !== null,
  };
}

/** The session a check made, which nobody will use: gone before the answer. */
const discard = (deps: Deps, sessionId: string) => revokeSession(deps, sessionId);

/**
 * The user's password, through the sign-in of the API (its lockout and failure audit included). With TOTP active the
 * API answers a ticket instead of a session: the password was right, and the unused ticket expires by itself.
 */
export async function provePassword(
  scope: SignInScope,
  user: UserRow,
  password: string,
): Promise<SignInMethod> {
  if (!user.email) throw new AppError("invalid-email-password");
  const result = await signInEmailPassword(scope, { email: user.email, password });
  if (result.session) await discard(scope.deps, result.session.refreshTokenId);
  return "password";
}

/**
 * A TOTP code (or a recovery code) of the user, through the API's second step: a ticket for this user (the API makes
 * one only for a user with TOTP active), then the code, with the per-user guess cap of every second-factor check.
 */
export async function proveTotp(scope: SignInScope, user: UserRow, otp: string): Promise<SignInMethod> {
  const { deps } = scope;
  if (user.activeMfaType !== "totp") throw new AppError("invalid-totp");
  const started = await startSession(scope, { user, mfaGate: true });
  if (!started.mfa) {
    if (started.session) await discard(deps, started.session.refreshTokenId);
    throw new AppError("invalid-totp");
  }
  const { session } = await verifySignInMfaTotp(scope, { ticket: started.mfa.ticket, otp });
  await discard(deps, session.refreshTokenId);
  return "totp";
}

/**
 * A passkey ceremony the page's script just performed with the ordinary API (`/signin/webauthn`, then `/verify`): the
 * session it got, spent once here (no grace window: a replayed token ends that session). It proves a passkey only if
 * that session was made by a WebAuthn sign-in moments ago, and only for its own user: a passkey of ANOTHER account
 * in this browser raises nothing (`other-user`).
 */
export async function provePasskey(
  scope: SignInScope,
  user: UserRow,
  refreshToken: string,
): Promise<SignInMethod | "other-user"> {
  const { deps } = scope;
  const session = await renewSession(deps, refreshToken.slice(0, 100), 0, undefined, {
    authenticationMethod: scope.method ?? "other",
  });
  const facts = await sessionFacts(deps, session.user.id, session.refreshTokenId);
  await discard(deps, session.refreshTokenId);
  if (session.user.id !== user.id) return "other-user";
  const fresh = facts && deps.now() - facts.createdAt <= PASSKEY_PROOF_WINDOW_MS;
  if (facts?.method !== "webauthn" || !fresh) {
    throw new AppError("invalid-request", "that session is not a passkey sign-in just made");
  }
  return "passkey";
}
