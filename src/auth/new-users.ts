import { eq } from "drizzle-orm";
import { removeHomeRowsOfUser } from "../db/client-rows";
import { claim, type DirectoryEntry, releaseEntries, releaseUser } from "../db/directory";
import { type UserRow, users } from "../db/schema";
import { AppError, UnavailableError } from "../errors";
import { beforeUserCreated } from "../hooks/before-user-created";
import type { Deps } from "../http/deps";
import { admitSignUp, countSignUp } from "../http/sign-up-gate";
import { randomUuid } from "../lib/crypto";
import { isEmailAllowed } from "../lib/email-access";
import { gravatarUrl } from "../lib/gravatar";
import { signUpChecks } from "./sign-up-checks";
import { type ResolvedSignUpOptions, resolveSignUpOptions, type SignUpOptions } from "./sign-up-options";
import { findUserByEmail, findUserByPhoneNumber, toWireUser } from "./users";

/**
 * Who asks for the user, and so which sign-up checks apply (contract §9, src/http/sign-up-gate.ts):
 * - `visitor`: someone signing up by themselves (the sign-up routes, anonymous sign-in, a magic link, an email or
 *   SMS code): Turnstile's `signup` challenge when guarded, and the `SIGNUPS` count;
 * - `ceremony`: the second step of a passkey sign-up, whose challenge was only issued to a request that passed them;
 * - `identity-provider`: a person an identity provider vouches for (a social sign-in's callback, which comes back
 *   through the browser and cannot carry a Turnstile token): the `SIGNUPS` count;
 * - `operator`: the admin API (its own authentication): none.
 */
export type Admission = "visitor" | "ceremony" | "identity-provider" | "operator";

export interface NewUser {
  admission: Admission;
  /** The way in that creates it, for the `signup` event ("other" when none: an import, an operator's script). */
  method: string | null;
  /** Set when the id was promised before the user exists (the WebAuthn user handle); random otherwise. */
  id?: string;
  email: string | null;
  phoneNumber?: string;
  passwordHash?: string | null;
  options: ResolvedSignUpOptions;
  isAnonymous?: boolean;
  emailVerified?: boolean;
  /** A picture the user already has (an identity provider's); else Gravatar when enabled. */
  avatarUrl?: string;
  /** GoTrue's `app_metadata`, which only an operator sets (the Supabase face's `admin.createUser`). */
  appMetadata?: Record<string, unknown> | null;
}

/** The checks `admission` calls for, before anything is written. */
async function admit(deps: Deps, admission: Admission, input: NewUser): Promise<void> {
  if (admission === "visitor") await admitSignUp(deps);
  else if (admission === "identity-provider") await countSignUp(deps);
  // The checks other features add (src/risk/'s disposable domains): every way in but an operator's.
  if (admission !== "operator") {
    for (const refuse of signUpChecks()) await refuse(deps, { email: input.email, method: input.method });
  }
}

/**
 * "A user is about to be created": the one place a user row is written, after the sign-up checks its admission
 * calls for (a route normally ran them before its work; they run here again for nothing then, or for the first time
 * if a route forgot, so a new way in fails closed), then the app's `BEFORE_USER_CREATED` hook for every way in but
 * the admin API (contract move-in §5.3: it sees the User resource about to exist and may refuse it, 403 `forbidden`
 * with its message; no answer refuses too, 503). `undefined` when the email is taken: the unique index decides, so
 * two racing requests cannot create the same account.
 */
export async function createUser(deps: Deps, input: NewUser): Promise<UserRow | undefined> {
  await admit(deps, input.admission, input);
  const now = deps.now();
  const { options } = input;
  const row = {
    id: input.id ?? randomUuid(),
    createdAt: now,
    updatedAt: now,
    disabled: deps.config.signUp.newUsersDisabled,
    displayName: options.displayName,
    avatarUrl: input.avatarUrl || (input.email ? await gravatarUrl(input.email, deps.config) : ""),
    locale: options.locale,
    email: input.email,
    phoneNumber: input.phoneNumber ?? null,
    emailVerified: input.emailVerified ?? false,
    emailVerifiedAt: input.emailVerified ? now : null,
    passwordHash: input.passwordHash ?? null,
    defaultRole: options.defaultRole,
    roles: options.allowedRoles,
    isAnonymous: input.isAnonymous ?? false,
    metadata: options.metadata,
    appMetadata: input.appMetadata ?? null,
  };
  if (input.admission !== "operator") {
    await beforeUserCreated(deps, toWireUser({ ...row, phoneNumberVerified: false, activeMfaType: null }));
  }
  // With several shards the directory decides first which user an email or a number belongs to (claim, then
  // write, then give the claim back if the write did not happen: src/db/directory.ts); the shard's unique index
  // stays the guard within a shard, and the only one with one shard.
  const keys = identifiersOf(row);
  if (await claim(deps.shards, row.id, keys, now)) return undefined;
  const created = await insertClaimed(deps, row, keys);
  if (created) {
    deps.audit({
      type: "signup",
      userId: created.id,
      detail: { method: input.method ?? "other", anonymous: created.isAnonymous },
    });
  }
  return created;
}

/**
 * Writes the row of a user whose identifiers `keys` were just claimed for it. The claim goes back only when the row
 * is surely not there: the shard's unique index refused it (no row returned), or a fault after which the row, read
 * back, is not there. A fault may come after D1 applied the insert (its answer lost): the read then finds this
 * request's row (its id and creation time), and the sign-up goes on with it. Given back then, the claim would leave
 * the row's address free: sign-in by it would find no account, and another sign-up whose user fell in another shard
 * would make a second one. When the read fails too, the claim stays and the fault is answered: the retry meets the
 * claim (`email-already-in-use`, and the address signs in if the row is there); a claim whose row never arrived is
 * taken over once older than the claim window (src/db/directory.ts).
 */
async function insertClaimed(
  deps: Deps,
  row: typeof users.$inferInsert & { id: string; createdAt: number },
  keys: readonly DirectoryEntry[],
): Promise<UserRow | undefined> {
  const db = deps.shards.ofUser(row.id);
  const giveBack = () => releaseEntries(deps.shards, row.id, keys).catch(() => {});
  let created: UserRow | undefined;
  try {
    created = await db.insert(users).values(row).onConflictDoNothing().returning().get();
  } catch (error) {
    const written = await db
      .select()
      .from(users)
      .where(eq(users.id, row.id))
      .get()
      .then(
        (found) => (found?.createdAt === row.createdAt ? found : null),
        () => "unknown" as const,
      );
    if (written && written !== "unknown") return written;
    if (written === null) await giveBack();
    throw error;
  }
  if (!created) await giveBack();
  return created;
}

/** The directory entries of a user row: its email and its phone number, when it has them. */
export function identifiersOf(row: { email: string | null; phoneNumber: string | null }): DirectoryEntry[] {
  return [
    ...(row.email ? [{ kind: "email" as const, value: row.email }] : []),
    ...(row.phoneNumber ? [{ kind: "phone" as const, value: row.phoneNumber }] : []),
  ];
}

/**
 * Removes a user. First the home rows the schema's cascades removed while everything was one database (migration
 * 0022): the OAuth2 clients the user registered (with their grants in every shard), their device approvals and
 * provider handoffs; a failure there stops before the user goes, so the deletion can be tried again. Then the row
 * in its shard (its sessions, keys, tokens and grants go by the shard's cascades; the triggers write
 * `user.deleted`), then its directory entries: one left behind is stale, harmless, and taken over by the next claim
 * (src/db/directory.ts).
 */
export async function removeUser(deps: Pick<Deps, "shards">, userId: string): Promise<void> {
  await removeHomeRowsOfUser(deps.shards, userId);
  await deps.shards.ofUser(userId).delete(users).where(eq(users.id, userId)).run();
  await releaseUser(deps.shards, userId).catch(() => {});
}

/** A passwordless request (magic link, email OTP): the address, and the sign-up options for a new user. */
export interface PasswordlessRequest {
  email: string;
  options?: SignUpOptions;
}

/**
 * How a passwordless flow treats the address: `sign-in` finds or creates the account (contract §3.2, "creates the
 * user if absent"); `sign-up` (the `/signup/…` variants of client.md §15) refuses an address that has one;
 * `existing` (GoTrue's `shouldCreateUser: false`) only finds one, and an unknown address is answered as any other.
 */
export type PasswordlessMode = "sign-in" | "sign-up" | "existing";

/**
 * Finds the user of a passwordless flow, or creates it with the sign-up checks. `null` means "answer OK and send
 * nothing": a sign-in for an address without an account while `AUTH_DISABLE_SIGNUP` is on. Answering
 * `signup-disabled` there would tell anyone which addresses have accounts.
 */
async function findOrCreate(
  deps: Deps,
  mode: PasswordlessMode,
  find: () => Promise<UserRow | undefined>,
  create: () => Promise<UserRow | undefined>,
  taken: () => AppError,
): Promise<UserRow | null> {
  const existing = await find();
  if (existing && mode === "sign-up") throw taken();
  if (existing) return existing;
  if (mode === "existing") return null;
  if (deps.config.signUp.disabled) {
    if (mode === "sign-up") throw new AppError("signup-disabled");
    return null;
  }
  const inserted = await create();
  if (!inserted && mode === "sign-up") throw taken();
  // Lost a race with another first use of the same identifier: that request's user is this one.
  const user = inserted ?? (await findSoon(find));
  // Still none: the other request's user is not there (yet, or any more): the client's retry decides afresh.
  if (!user)
    throw new UnavailableError("the identifier's user is being created or removed by another request");
  return user;
}

/**
 * With several shards the request that won a race claims the identifier in the directory before it writes its
 * user (src/db/directory.ts), so the loser may look a moment too early: it looks again, a few times, briefly.
 */
async function findSoon(find: () => Promise<UserRow | undefined>): Promise<UserRow | undefined> {
  for (const waitMs of [0, 25, 50, 100, 200]) {
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    const user = await find();
    if (user) return user;
  }
  return undefined;
}

/** The user of a magic link or email code (see `findOrCreate`), and the resolved redirect. */
export async function findOrCreateEmailUser(
  deps: Deps,
  request: PasswordlessRequest,
  mode: PasswordlessMode,
  /** The way in the user would be created by (`email-link`, `email-otp`, the built-in page's). */
  method: string | null,
): Promise<{ user: UserRow | null; redirectTo: string }> {
  const { config } = deps;
  const address = request.email.toLowerCase();
  if (!isEmailAllowed(address, config)) throw new AppError("invalid-email-password");
  const options = resolveSignUpOptions(config, request.options, address);
  const user = await findOrCreate(
    deps,
    mode,
    () => findUserByEmail(deps.shards, address),
    () => createUser(deps, { admission: "visitor", method, email: address, options }),
    () => new AppError("email-already-in-use"),
  );
  return { user, redirectTo: options.redirectTo };
}

/**
 * The user of an SMS sign-in or sign-up (see `findOrCreate`); the display name defaults to the number. `created`:
 * this request made the user (the caller undoes it if the code cannot be sent).
 */
export async function findOrCreatePhoneUser(
  deps: Deps,
  phoneNumber: string,
  signUpOptions: SignUpOptions | undefined,
  mode: PasswordlessMode,
): Promise<{ user: UserRow | null; created: boolean }> {
  const options = resolveSignUpOptions(deps.config, signUpOptions, phoneNumber);
  let created = false;
  const user = await findOrCreate(
    deps,
    mode,
    () => findUserByPhoneNumber(deps.shards, phoneNumber),
    async () => {
      const inserted = await createUser(deps, {
        admission: "visitor",
        method: "sms-otp",
        email: null,
        phoneNumber,
        options,
      });
      created = inserted !== undefined;
      return inserted;
    },
    () => new AppError("phone-number-already-in-use"),
  );
  return { user, created };
}
