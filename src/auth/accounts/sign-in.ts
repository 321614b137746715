import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import { isEmailAllowed } from "../../lib/email-access";
import { verifyPassword } from "../../lib/password";
import { beginAttempt, checkedBesideCount } from "../lockout";
import {
  beginSignIn,
  passwordKeptElsewhere,
  readBeforeFirstFactor,
  type SignInResult,
  type SignInScope,
  settleFirstFactor,
  startSession,
} from "../sign-in";
import { accountOfEmail } from "../users";
import { startPasswordSession } from "./password-session";

/**
 * signInEmailPassword. Unknown email, wrong password and a blocked email give the same 401 after the same work:
 * a dummy hash is verified when there is no user (OWASP Authentication Cheat Sheet, "authentication responses").
 * Account state (disabled, unverified) is only revealed to someone who knows the password. Ten wrong passwords
 * within the hour lock the password of the account (auth/lockout/, docs/protection.md "Lockout").
 */
export async function signInEmailPassword(
  scope: SignInScope,
  input: { email: string; password: string },
): Promise<SignInResult> {
  const { deps } = scope;
  const { config } = deps;
  // Enforced SSO is decided by the email's domain, before the password is looked at: a right password answered
  // differently from a wrong one would make this endpoint an oracle for the passwords of accounts that can no
  // longer use them (and reused elsewhere). The domain's enforcement is no secret: `POST /sso/start` tells it too.
  // The first factor is a password, whatever the session is recorded as (the built-in page's, a re-authentication).
  // The account is located beside those checks and the route's rate limit (one wave, issue 48 "Round trips"): a read,
  // used only once they passed; nothing is written and no password looked at before the limit has counted.
  const [, account] = await Promise.all([
    beginSignIn(scope, { method: "email-password", email: input.email }),
    accountOfEmail(deps.shards, input.email),
    scope.counted,
  ]);
  // Then, side by side: the account's row (with several shards: the directory named its owner), what its session will
  // need after the password (../sign-in/early-reads.ts: reads, and the risk velocity's count taken back for a wrong
  // password; awaited only once the password is right), and the lockout's count (`checkPassword`).
  const read = account.user();
  if (account.id) readBeforeFirstFactor(scope, account.id, account.readAt);
  const checked = checkPassword(scope, input, account.id, read);
  // The verdict goes to what was counted before it (the risk velocity's count is taken back for a wrong password).
  settleFirstFactor(
    scope,
    checked.then(({ right }) => right),
  );
  const { eligible, check, kept, right } = await checked;
  if (kept && "session" in kept) return { session: kept.session, mfa: null };
  const signingIn = kept && "user" in kept ? kept.user : eligible;
  if (!signingIn || !right) throw new AppError("invalid-email-password");
  if (signingIn.disabled) throw new AppError("disabled-user");
  if (config.signUp.emailVerifiedRequired && !signingIn.emailVerified) {
    throw new AppError("unverified-user");
  }
  if (kept) return startSession(scope, { user: signingIn, mfaGate: true });
  return startPasswordSession(scope, signingIn, input.password, check);
}

/**
 * The account's lockout (contract §13), counted beside the account's row, then the password: the first factor's
 * verdict, and what it was checked against. A password no hash here answers for (a user moved in without one, an
 * unknown email) may be checked where it is still kept (src/password-migration/); its verdict then stands for the
 * check's, after the same work.
 */
async function checkPassword(
  scope: SignInScope,
  input: { email: string; password: string },
  userId: string | undefined,
  read: Promise<UserRow | undefined>,
) {
  const { config } = scope.deps;
  const { user, eligible, check, attempt } = await countAndHash(scope, {
    identifier: `email:${input.email}`,
    userId,
    read,
    password: input.password,
    eligible: () => isEmailAllowed(input.email, config),
  });
  const kept = await passwordKeptElsewhere(scope, { ...input, user });
  const right = kept ? kept.verified : Boolean(eligible && check.ok);
  await attempt.settle(right, user);
  return { user, eligible, check, kept, right };
}

/**
 * A password sign-in's lockout count and hash (an email's or a phone number's): while the lockout holds, a right
 * password is refused too, and an unknown identifier locks and answers the same (its count is kept under a keyed
 * hash). The count is sent beside the account's row (with several shards the row is read here; with one it came with
 * the first trip), and the hash runs while it is in flight, its verdict looked at only once the count allowed the
 * attempt (`checkedBesideCount`). `eligible`: whether the row may sign in with a password at all (an email the
 * configuration blocks may not); an ineligible row is checked against the dummy hash, as an unknown one.
 */
export async function countAndHash(
  scope: SignInScope,
  input: {
    identifier: string;
    userId: string | undefined;
    read: Promise<UserRow | undefined>;
    password: string;
    eligible: (user: UserRow) => boolean;
  },
) {
  const { deps } = scope;
  const counting = beginAttempt(
    deps,
    "password",
    { userId: input.userId, identifier: input.identifier },
    input.password,
  );
  // Awaited after the hash; a row that fails to read leaves it unawaited, which must not be an unhandled rejection.
  counting.catch(() => {});
  const user = await input.read;
  const eligible = user && input.eligible(user) ? user : undefined;
  const { attempt, checked: check } = await checkedBesideCount(counting, () =>
    verifyPassword(input.password, eligible?.passwordHash ?? null, deps.config.passwordHashCost),
  );
  return { user, eligible, check, attempt };
}
