import { and, eq, isNotNull } from "drizzle-orm";
import { z } from "zod";
import {
  type ActiveMembership,
  conformingDisplayName,
  createUser,
  findUserByEmail,
  orgRoles,
  proveEmail,
  readBeforeFirstFactor,
  resolveSignUpOptions,
  type SignInScope,
  settleFirstFactor,
} from "../auth";
import { orgDomains, type SsoConnectionRow, type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { isEmailAllowed } from "../lib/email-access";
import { accountThrough, keepMembership, memberState, roleAfterKeep, suspended } from "./membership";
import type { SsoIdentity } from "./requests";

/**
 * Who an enterprise sign-in is for, made just in time (contract organizations.md §2). The one rule that matters: a
 * connection signs in, links or creates only users whose email is in one of ITS organization's VERIFIED domains. An
 * IdP can assert any address; without this rule the owner of any org could add an IdP that asserts
 * `victim@gmail.com` and walk into that account (the "nOAuth" class of takeovers, Descope 2023).
 */

const emailShape = z.email().max(254);

/** The lower-cased email, if its shape and the IdP's word allow it and the connection serves its domain; else a refusal. */
function checkedEmail(connection: SsoConnectionRow, identity: SsoIdentity): string {
  const email = identity.email?.trim().toLowerCase() ?? "";
  if (!emailShape.safeParse(email).success) {
    throw new AppError("sso-assertion-invalid", "the identity provider asserted no usable email");
  }
  // An IdP that says it did not verify the address vouches for nothing (OIDC Core §5.1 `email_verified`).
  if (identity.emailVerified === false) {
    throw new AppError("sso-assertion-invalid", "the identity provider did not verify the email");
  }
  // A setup link's connection serves only the domains verified through that link, until an owner widens it.
  if (connection.domains && !connection.domains.includes(domainOf(email))) {
    throw new AppError("sso-email-outside-domains");
  }
  return email;
}

const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1);

/** Whether `domain` is one of the org's verified domains: one read by the domains' key. */
async function domainVerified(deps: Pick<Deps, "db">, orgId: string, domain: string): Promise<boolean> {
  const verified = await deps.db
    .select({ domain: orgDomains.domain })
    .from(orgDomains)
    .where(and(eq(orgDomains.orgId, orgId), eq(orgDomains.domain, domain), isNotNull(orgDomains.verifiedAt)))
    .get();
  return verified !== undefined;
}

/** The lower-cased email, if it is in one of the connection's org's verified domains; else a refusal. */
export async function emailInsideDomains(
  deps: Pick<Deps, "db">,
  connection: SsoConnectionRow,
  identity: SsoIdentity,
): Promise<string> {
  const email = checkedEmail(connection, identity);
  if (!(await domainVerified(deps, connection.orgId, domainOf(email)))) {
    throw new AppError("sso-email-outside-domains");
  }
  return email;
}

/**
 * The org role the identity's groups map to through the connection's `roleMapping` (the most privileged of those
 * mapped, in the order of `orgRoles`), else the connection's default. A mapping to a role the deployment no longer
 * has is ignored.
 */
export function roleFor(deps: Pick<Deps, "config">, connection: SsoConnectionRow, groups: string[] = []) {
  const known = orgRoles(deps.config);
  const mapped = groups
    .map((group) => connection.roleMapping[group])
    .filter((role): role is string => typeof role === "string" && known.includes(role))
    .sort((a, b) => known.indexOf(a) - known.indexOf(b));
  return mapped[0] ?? (known.includes(connection.defaultRole) ? connection.defaultRole : "member");
}

/** A user made for the email (its address proven by the org's IdP), or the one that took it between the read and the insert. */
async function createFor(
  deps: Deps,
  email: string,
  displayName: string,
): Promise<{ user: UserRow; created: boolean }> {
  if (deps.config.signUp.disabled) throw new AppError("signup-disabled");
  const options = resolveSignUpOptions(deps.config, {}, displayName || email);
  const created = await createUser(deps, {
    admission: "identity-provider",
    // The `signup` event of an enterprise sign-in's new user has named no method (its session's is `sso:*`).
    method: null,
    email,
    emailVerified: true,
    options: { ...options, displayName: displayName || email },
  });
  if (created) return { user: created, created: true };
  // The email was taken between the lookup and the insert: that user it is.
  const raced = await findUserByEmail(deps.shards, email);
  if (!raced) throw new AppError("email-already-in-use");
  return { user: raced, created: false };
}

/** What an enterprise sign-in starts its session with (./finish.ts). */
export interface ConnectionSignIn {
  user: UserRow;
  /** The session's organization: the connection's, with the role the membership has once `keepMembership` ran. */
  org: ActiveMembership;
  /**
   * The membership's write, run beside the session's start (./membership.ts): nothing before it could refuse the
   * sign-in for the membership's sake (a suspended one was refused from the read).
   */
  keepMembership: () => Promise<void>;
}

/**
 * The user an enterprise sign-in is for, in as few trips as the shards allow (issue 48, "Round trips"): the org's
 * verified domains, the user's row, the membership and what the session will need (its second factors, the risk
 * gate's reads: src/auth/sign-in/early-reads.ts) are read side by side as soon as the user's id is known (at once
 * with `userHint`, the id the result's take answered: ./requests.ts). Every refusal still comes before anything is
 * written: the email outside the org's verified domains (no user made, nothing linked, no membership), an email the
 * allow-list refuses, a disabled user, a suspended membership. Then the user is proven or made, its name refreshed
 * from the IdP; the membership is written by `keepMembership`, beside the session.
 */
export async function userThroughConnection(
  deps: Deps,
  connection: SsoConnectionRow,
  identity: SsoIdentity,
  { scope, userHint }: { scope?: SignInScope; userHint?: string } = {},
): Promise<ConnectionSignIn> {
  const email = checkedEmail(connection, identity);
  // What was counted early (the risk velocity's, from a public address) is taken back when the sign-in is refused
  // here, as for a wrong password: src/auth/sign-in/early-reads.ts.
  let settle: (signingIn: boolean) => void = () => {};
  if (scope) settleFirstFactor(scope, new Promise<boolean>((resolve) => (settle = resolve)));
  const readEarly = (userId: string) => scope && readBeforeFirstFactor(scope, userId);
  try {
    const domain = domainVerified(deps, connection.orgId, domainOf(email));
    domain.catch(() => {});
    const [verified, found] = await Promise.all([
      domain,
      accountThrough(deps, email, connection.orgId, userHint, readEarly),
    ]);
    // The reads beside aside, the domain decides first, as before: outside the org's verified domains, nothing more.
    if (!verified) throw new AppError("sso-email-outside-domains");
    if (!isEmailAllowed(email, deps.config)) throw new AppError("forbidden", "this email is not allowed");
    const displayName = conformingDisplayName(identity.displayName ?? "");
    const made = found.user
      ? { user: found.user, created: false, member: found.member }
      : await madeFor(deps, email, displayName, connection.orgId);
    let user = made.user;
    if (user.disabled) throw new AppError("disabled-user");
    if (made.member && !made.member.active) throw suspended();
    // The org's IdP inside the org's verified domain is a proof of the address: whatever a stranger set up on an
    // account they never proved (account pre-hijacking) is wiped before it is signed in (src/auth/credential-reset.ts).
    if (!made.created) user = await proveEmail(deps, user, "inbox");
    if (!made.created && displayName && displayName !== user.displayName) {
      user =
        (await deps.shards
          .ofUser(user.id)
          .update(users)
          .set({ displayName, updatedAt: deps.now() })
          .where(eq(users.id, user.id))
          .returning()
          .get()) ?? user;
    }
    const mapped = roleFor(deps, connection, identity.groups);
    const signingIn = user;
    settle(true);
    return {
      user: signingIn,
      org: { orgId: connection.orgId, role: roleAfterKeep(made.member, mapped) },
      keepMembership: () => keepMembership(deps, connection, signingIn.id, mapped, made.created),
    };
  } catch (error) {
    settle(false);
    throw error;
  }
}

/** The user of the email and their membership, made if need be (a first sign-in: the org makes the user). */
async function madeFor(deps: Deps, email: string, displayName: string, orgId: string) {
  const made = await createFor(deps, email, displayName);
  // A user made here has no membership yet; one made by a sign-in that raced this one may have.
  const member = made.created ? undefined : await memberState(deps, orgId, made.user.id);
  return { ...made, member };
}
