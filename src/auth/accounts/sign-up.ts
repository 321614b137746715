import type { UserRow } from "../../db/schema";
import { AppError } from "../../errors";
import { isEmailAllowed } from "../../lib/email-access";
import { hashPassword } from "../../lib/password";
import { type LinkTarget, sendTicketMail } from "../links";
import type { Session } from "../new-sessions";
import { createUser, removeUser } from "../new-users";
import { type SignInScope, startSession } from "../sign-in";
import { resolveSignUpOptions, type SignUpOptions } from "../sign-up-options";
import { checkPasswordPolicy } from "./password-policy";

export interface SignUpEmailPasswordInput {
  email: string;
  password: string;
  options?: SignUpOptions;
  codeChallenge?: string;
  /** The verification link's target when one of the service's own pages signs up (`signOwnRedirect`). */
  ownRedirect?: string;
}

/**
 * signUpEmailPassword, checks in the contract's order: signup disabled → allow/block lists → password length →
 * HIBP → options → duplicate email. The duplicate check is the INSERT itself (unique index), so two racing sign-ups
 * cannot both create the account.
 */
export async function signUpEmailPassword(
  scope: SignInScope,
  input: SignUpEmailPasswordInput,
  /** What another system vouches for (a password migration hook, src/password-migration/), never a client's body. */
  vouched: { emailVerified?: boolean; avatarUrl?: string } = {},
): Promise<{ session: Session | null }> {
  const { deps } = scope;
  const { config } = deps;
  const email = input.email.toLowerCase();
  if (config.signUp.disabled) throw new AppError("signup-disabled");
  if (!isEmailAllowed(email, config)) throw new AppError("invalid-email-password");
  await checkPasswordPolicy(deps, input.password);
  const options = resolveSignUpOptions(config, input.options, email);

  const user = await createUser(deps, {
    admission: "visitor",
    method: scope.method,
    email,
    passwordHash: await hashPassword(input.password, config.passwordHashCost),
    options,
    ...vouched,
  });
  if (!user) throw new AppError("email-already-in-use");

  return completeSignUp(scope, user, {
    redirectTo: input.ownRedirect ?? options.redirectTo,
    codeChallenge: input.codeChallenge,
    form: scope.linkForm,
  });
}

/**
 * The end of every sign-up with an email (password, security key): with verification required, the verification
 * mail and no session; otherwise a session unless new users start disabled.
 */
export async function completeSignUp(
  scope: SignInScope,
  user: UserRow,
  target: LinkTarget,
): Promise<{ session: Session | null }> {
  const { deps } = scope;
  const verificationRequired = deps.config.signUp.emailVerifiedRequired && !user.emailVerified;
  if (verificationRequired) {
    try {
      await sendTicketMail(deps, user, "verifyEmail", target);
    } catch (error) {
      // Without its mail the account could never be verified: undo it so that the sign-up can simply be retried.
      await removeUser(deps, user.id);
      throw error;
    }
  }
  if (verificationRequired || user.disabled) return { session: null };
  try {
    return { session: (await startSession(scope, { user })).session };
  } catch (error) {
    // A binding failed after the account was made (contract §1, 503): undo it, as for the mail above, so the
    // sign-up is retried as it was sent rather than meeting `email-already-in-use`. If D1 refuses the undo too, the
    // account stays, whole, and the password signs in.
    await removeUser(deps, user.id).catch(() => {});
    throw error;
  }
}
