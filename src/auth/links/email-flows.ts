import { eq } from "drizzle-orm";
import { type UserRow, users } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { isEmailAllowed } from "../../lib/email-access";
import { findOrCreateEmailUser, type PasswordlessMode, type PasswordlessRequest } from "../new-users";
import { beginSignIn, type SignInScope } from "../sign-in";
import { resolveRedirectTo } from "../sign-up-options";
import { findUserByEmail } from "../users";
import { type LinkForm, type LinkTarget, sendTicketMail } from "./ticket-mail";

/**
 * The flows that answer by mail. Where the contract asks for it, the answer does not tell whether the address has
 * an account: an unknown or disabled address gets the same `"OK"` and no mail.
 */

/*
 * Reset and resend answer after the same work whatever the address: one lookup. The ticket and the mail (a D1
 * write and an SMTP exchange, tens of milliseconds) go to `deps.background`, after the answer, or their time alone
 * would tell known addresses from unknown ones. A failed send is logged with the request id (docs/decisions.md).
 */

/** What the mail-sending operations take besides the address: the app's redirect and PKCE challenge. */
export interface LinkRequest {
  redirectTo?: string;
  codeChallenge?: string;
  /** A target the service minted for one of its own pages (`signOwnRedirect`), instead of `redirectTo`. */
  ownRedirect?: string;
  /** The form of the link, for a face other than the Nhost API (ticket-mail.ts). */
  form?: LinkForm;
}

export function linkTarget(deps: Deps, request: LinkRequest): LinkTarget {
  return {
    redirectTo: request.ownRedirect ?? resolveRedirectTo(deps.config, request.redirectTo),
    codeChallenge: request.codeChallenge,
    form: request.form,
  };
}

/** sendVerificationEmail: unknown → "OK" and nothing sent (improvement); already verified → 400. */
export async function sendVerificationEmail(deps: Deps, email: string, request: LinkRequest): Promise<void> {
  const target = linkTarget(deps, request);
  const user = await findUserByEmail(deps.shards, email);
  if (!user || user.disabled) return;
  if (user.emailVerified) throw new AppError("email-already-verified");
  deps.background(sendTicketMail(deps, user, "verifyEmail", target));
}

/** sendPasswordResetEmail: always "OK"; a `passwordReset:` ticket (1 h) for a known, enabled user. */
export async function sendPasswordResetEmail(deps: Deps, email: string, request: LinkRequest): Promise<void> {
  const target = linkTarget(deps, request);
  const user = await findUserByEmail(deps.shards, email);
  if (!user || user.disabled || !isEmailAllowed(email, deps.config)) return;
  deps.background(sendTicketMail(deps, user, "passwordReset", target));
}

/**
 * signInPasswordlessEmail (magic link): creates the user on first use; a disabled user gets "OK" and no mail.
 * signUpPasswordlessEmail is the same in mode "sign-up".
 */
export async function signInPasswordlessEmail(
  scope: SignInScope,
  request: PasswordlessRequest & { codeChallenge?: string },
  mode: PasswordlessMode,
  /** A target the service minted for one of its own pages (`signOwnRedirect`), instead of `options.redirectTo`. */
  ownRedirect?: string,
): Promise<void> {
  const { deps } = scope;
  if (!deps.config.passwordless.emailLink) throw new AppError("disabled-endpoint");
  // Enforced SSO (organizations.md §2): no link is mailed that could only be refused.
  await beginSignIn(scope, { method: "email-link", email: request.email });
  const { user, redirectTo } = await findOrCreateEmailUser(deps, request, mode, scope.method);
  if (!user || user.disabled) return;
  await sendTicketMail(deps, user, "passwordlessEmail", {
    redirectTo: ownRedirect ?? redirectTo,
    codeChallenge: request.codeChallenge,
    form: scope.linkForm,
  });
}

/**
 * changeUserEmail: records the new address and mails an `emailConfirmChange:` link to it. The address itself
 * changes only when that link is followed, so a typo cannot lock the user out.
 */
export async function changeUserEmail(deps: Deps, userId: string, newEmail: string, request: LinkRequest) {
  const target = linkTarget(deps, request);
  const user = await recordEmailChange(deps, userId, newEmail);
  await sendTicketMail(deps, user, "emailConfirmChange", target, user.newEmail);
}

/** The new address of an email change, recorded until its link is followed; refused when not allowed or taken. */
export async function recordEmailChange(deps: Deps, userId: string, newEmail: string): Promise<UserRow> {
  const address = newEmail.toLowerCase();
  if (!isEmailAllowed(address, deps.config)) throw new AppError("invalid-email-password");
  if (await findUserByEmail(deps.shards, address)) throw new AppError("email-already-in-use");
  const user = await deps.shards
    .ofUser(userId)
    .update(users)
    .set({ newEmail: address, updatedAt: deps.now() })
    .where(eq(users.id, userId))
    .returning()
    .get();
  if (!user) throw new AppError("unauthorized");
  return user;
}
