import { eq } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import { users } from "../../db/schema";
import { AppError } from "../../errors";
import { beforeUserCreated } from "../../hooks/before-user-created";
import type { Deps } from "../../http/deps";
import { admitSignUp } from "../../http/sign-up-gate";
import { isEmailAllowed } from "../../lib/email-access";
import { gravatarUrl } from "../../lib/gravatar";
import { hashPassword } from "../../lib/password";
import { changeIdentifiers } from "../identifier-changes";
import { sendTicketMail } from "../links";
import type { Session } from "../new-sessions";
import { createUser } from "../new-users";
import { type SignInScope, startSession } from "../sign-in";
import { resolveSignUpOptions, type SignUpOptions } from "../sign-up-options";
import { findUserById, toWireUser } from "../users";
import { checkPasswordPolicy } from "./password-policy";

const ANONYMOUS_ROLE = "anonymous";

/** signInAnonymous: a user with role `anonymous` and no email, behind `AUTH_ANONYMOUS_USERS_ENABLED`. */
export async function signInAnonymous(
  scope: SignInScope,
  input: { displayName?: string; locale?: string; metadata?: Record<string, unknown> },
): Promise<{ session: Session }> {
  const { deps } = scope;
  const { config } = deps;
  if (!config.passwordless.anonymous) throw new AppError("disabled-endpoint");
  if (config.signUp.disabled) throw new AppError("signup-disabled");
  const locale =
    input.locale && config.locales.allowed.includes(input.locale) ? input.locale : config.locales.default;
  const user = await createUser(deps, {
    admission: "visitor",
    method: "anonymous",
    email: null,
    isAnonymous: true,
    options: {
      allowedRoles: [ANONYMOUS_ROLE],
      defaultRole: ANONYMOUS_ROLE,
      displayName: input.displayName || "Anonymous User",
      locale,
      metadata: input.metadata ?? {},
      redirectTo: config.urls.defaultRedirect,
    },
  });
  if (!user) throw new AppError("internal-server-error", undefined, "anonymous user id collided");
  return { session: (await startSession(scope, { user })).session };
}

export interface DeanonymizeInput {
  signInMethod: "email-password" | "passwordless";
  email: string;
  password?: string;
  options?: SignUpOptions;
  codeChallenge?: string;
}

/**
 * deanonymizeUser: the anonymous user becomes a regular one with an email (and a password, or a magic link).
 * Roles become the regular sign-up roles. With verification required, the verification mail goes out.
 */
export async function deanonymizeUser(deps: Deps, userId: string, input: DeanonymizeInput): Promise<void> {
  const { config } = deps;
  const user = await findUserById(deps.shards, userId);
  if (!user) throw new AppError("unauthorized");
  if (!user.isAnonymous) throw new AppError("user-not-anonymous");
  // A regular account is about to exist: the sign-up checks, as for every other way in (the route ran them first).
  await admitSignUp(deps);
  const email = input.email.toLowerCase();
  if (!isEmailAllowed(email, config)) throw new AppError("invalid-email-password");
  if (input.signInMethod === "email-password") {
    if (!input.password) throw new AppError("invalid-request", "password: required for email-password");
    await checkPasswordPolicy(deps, input.password);
  } else if (!config.passwordless.emailLink) {
    throw new AppError("disabled-endpoint");
  }
  const options = resolveSignUpOptions(
    config,
    input.options,
    user.displayName === "Anonymous User" ? email : user.displayName,
  );
  const changes = {
    email,
    passwordHash: input.password ? await hashPassword(input.password, config.passwordHashCost) : null,
    passwordChangedAt: input.password ? deps.now() : null,
    isAnonymous: false,
    emailVerified: false,
    defaultRole: options.defaultRole,
    roles: options.allowedRoles,
    displayName: options.displayName,
    avatarUrl: await gravatarUrl(email, config),
    locale: input.options?.locale ? options.locale : user.locale,
    metadata: input.options?.metadata ?? user.metadata,
    updatedAt: deps.now(),
  };
  // The regular account is born here: the app's BEFORE_USER_CREATED hook sees it as it will be (contract move-in
  // §5.3), or a guest it let in could become an address it refuses.
  await beforeUserCreated(deps, toWireUser({ ...user, ...changes }));
  let updated: typeof user | undefined;
  try {
    // The address is claimed in the directory before the user's shard takes it (identifier-changes.ts).
    updated = await changeIdentifiers(
      deps,
      userId,
      { added: [{ kind: "email", value: email }], removed: [] },
      () =>
        deps.shards.ofUser(userId).update(users).set(changes).where(eq(users.id, userId)).returning().get(),
      () => new AppError("email-already-in-use"),
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError("email-already-in-use");
    throw error;
  }
  if (!updated) throw new AppError("unauthorized");
  const target = { redirectTo: options.redirectTo, codeChallenge: input.codeChallenge };
  if (input.signInMethod === "passwordless") {
    await sendTicketMail(deps, updated, "passwordlessEmail", target);
  } else if (config.signUp.emailVerifiedRequired) {
    await sendTicketMail(deps, updated, "verifyEmail", target);
  }
}
