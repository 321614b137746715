import { and, eq, isNull } from "drizzle-orm";
import {
  conformingDisplayName,
  findUserByEmail,
  type KeptPasswordCheck,
  type KeptPasswordVerdict,
  type SignInScope,
  signUpEmailPassword,
} from "../auth";
import { type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { randomUuid } from "../lib/crypto";
import { isEmailAllowed } from "../lib/email-access";
import { hashPassword, verifyPassword } from "../lib/password";
import { ledgerRows } from "../move-in";
import { askOldSystem, type MigratedProfile } from "./hook";

/**
 * Where the hook takes part in a password sign-in (contract supabase.md §5), asked by the core once the lockout,
 * the rate limits and Turnstile let the attempt through (src/auth/accounts/sign-in.ts):
 * - a user the import ledger knows (kind `user`, src/move-in/) that has no password hash: the old system is asked;
 *   verified, the password is hashed here (the service's current hash) and the user signs in; not verified, the
 *   usual wrong password. Once the hash is written the hook is never asked for that user again.
 * - with `AUTH_HOOK_PASSWORD_MIGRATION_CREATE_USERS`, an email with no account, while sign-ups are on and the
 *   allow/block lists admit it: verified, the core sign-up makes the user (its checks, the `BEFORE_USER_CREATED`
 *   hook), from the answer's profile fields only, with the email asked about and a new id.
 * Nowhere else: a user with a hash, one created here or by the admin API (no ledger row), one whose address was
 * proven here since it moved in (`provenHere`), an email the lists refuse.
 *
 * Timing (the unknown-email question): every password sign-in while the hook is set reads the ledger once, for its
 * user or for none, and every one that asks the hook pays its round trip the same way, known user or unknown email,
 * before answering the same 401. What remains visible is the contract's own line: an email the hook is asked about
 * (an imported user without a hash; an unknown email under CREATE_USERS) against one it is not (docs/decisions.md,
 * "Issue 44: lazy password migration").
 */
export const checkKeptPassword: KeptPasswordCheck = async (scope, { email, password, user }) => {
  const { deps } = scope;
  const { endpoint, createUsers } = deps.config.passwordMigration;
  if (!endpoint) return null;
  const imported = await isImported(deps, user?.id);
  if (!isEmailAllowed(email, deps.config)) return null;
  if (user) {
    if (user.passwordHash !== null || !imported || !user.email || provenHere(user)) return null;
    const answer = await askOldSystem(deps, endpoint, { identifier: user.email, password, userId: user.id });
    return answer.verified ? completeUser(deps, user, password) : { verified: false };
  }
  if (!createUsers || deps.config.signUp.disabled) return null;
  const address = email.toLowerCase();
  const answer = await askOldSystem(deps, endpoint, { identifier: address, password, userId: null });
  return answer.verified ? createVouchedUser(scope, address, password, answer.user) : { verified: false };
};

/**
 * Whether the user's address was proven here since it moved in (imports never write `email_verified_at`; a code, a
 * link, a provider, SSO or an operator's word here does). The old system's password is then not the account's any
 * more: whoever held the address unproven there may have set it, and the first proof here wiped every credential
 * from before it (account pre-hijacking, src/auth/credential-reset.ts). The owner sets a password here.
 */
const provenHere = (user: UserRow) => user.emailVerifiedAt !== null;

/** Whether the import ledger has the user; for no user, the same read of a shard for a random id (same work). */
async function isImported(deps: Deps, userId: string | undefined): Promise<boolean> {
  const id = userId ?? randomUuid();
  return (await ledgerRows(deps.shards.ofUser(id), "user", [id])).has(id);
}

/**
 * Writes the password's hash only where there is none yet, in one statement, so two sign-ins racing with the same
 * verified answer (or different passwords the old system both took) cannot both complete the user differently: the
 * second finds the first's hash and is checked against it, like any password.
 */
async function completeUser(deps: Deps, user: UserRow, password: string): Promise<KeptPasswordVerdict> {
  const { config } = deps;
  const passwordHash = await hashPassword(password, config.passwordHashCost);
  const completed = await deps.shards
    .ofUser(user.id)
    .update(users)
    .set({ passwordHash, updatedAt: deps.now() })
    .where(and(eq(users.id, user.id), isNull(users.passwordHash)))
    .returning()
    .get();
  if (completed) return { verified: true, user: completed };
  return checkedAgainstHashHere(deps, user.email, password);
}

/**
 * The user the old system vouched for, made by the core sign-up (sign-ups on, allow/block lists, password policy,
 * Turnstile's `signup` challenge and the `SIGNUPS` count, `BEFORE_USER_CREATED`): its profile fields only, its
 * verified email only if the old system says so. Verification required and not verified: the mail goes out and the
 * answer is the sign-in's `unverified-user`, as for any user in that state.
 */
async function createVouchedUser(
  scope: SignInScope,
  email: string,
  password: string,
  profile: MigratedProfile,
): Promise<KeptPasswordVerdict> {
  const { deps } = scope;
  const emailVerified = profile.emailVerified ?? false;
  try {
    const { session } = await signUpEmailPassword(
      scope,
      {
        email,
        password,
        options: {
          // A name from elsewhere is made to follow the service's rule, as a provider's is, not refused.
          displayName: conformingDisplayName(profile.displayName ?? "") || undefined,
          locale: profile.locale ?? undefined,
          metadata: profile.metadata ?? undefined,
        },
      },
      { emailVerified, avatarUrl: profile.avatarUrl || undefined },
    );
    if (session) return { verified: true, session };
    const unverified = deps.config.signUp.emailVerifiedRequired && !emailVerified;
    throw new AppError(unverified ? "unverified-user" : "disabled-user");
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "email-already-in-use") throw error;
    // Another request made the account meanwhile (the same person, twice): its password decides, like any password.
    return checkedAgainstHashHere(deps, email, password);
  }
}

async function checkedAgainstHashHere(
  deps: Deps,
  email: string | null,
  password: string,
): Promise<KeptPasswordVerdict> {
  const user = email ? await findUserByEmail(deps.shards, email) : undefined;
  const check = await verifyPassword(password, user?.passwordHash ?? null, deps.config.passwordHashCost);
  return user && check.ok ? { verified: true, user } : { verified: false };
}
