import { and, eq, isNotNull } from "drizzle-orm";
import { z } from "zod";
import {
  conformingDisplayName,
  createUser,
  findUserByEmail,
  orgRoles,
  proveEmail,
  resolveSignUpOptions,
} from "../auth";
import { orgDomains, orgMembers, type SsoConnectionRow, type UserRow, users } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { isEmailAllowed } from "../lib/email-access";
import type { SsoIdentity } from "./requests";

/**
 * Who an enterprise sign-in is for, made just in time (contract organizations.md §2). The one rule that matters: a
 * connection signs in, links or creates only users whose email is in one of ITS organization's VERIFIED domains. An
 * IdP can assert any address; without this rule the owner of any org could add an IdP that asserts
 * `victim@gmail.com` and walk into that account (the "nOAuth" class of takeovers, Descope 2023).
 */

const emailShape = z.email().max(254);

/** The lower-cased email, if it is in one of the connection's org's verified domains; else a refusal. */
export async function emailInsideDomains(
  deps: Pick<Deps, "db">,
  connection: SsoConnectionRow,
  identity: SsoIdentity,
): Promise<string> {
  const email = identity.email?.trim().toLowerCase() ?? "";
  if (!emailShape.safeParse(email).success) {
    throw new AppError("sso-assertion-invalid", "the identity provider asserted no usable email");
  }
  // An IdP that says it did not verify the address vouches for nothing (OIDC Core §5.1 `email_verified`).
  if (identity.emailVerified === false) {
    throw new AppError("sso-assertion-invalid", "the identity provider did not verify the email");
  }
  const domain = email.slice(email.lastIndexOf("@") + 1);
  // A setup link's connection serves only the domains verified through that link, until an owner widens it.
  if (connection.domains && !connection.domains.includes(domain)) {
    throw new AppError("sso-email-outside-domains");
  }
  const verified = await deps.db
    .select({ domain: orgDomains.domain })
    .from(orgDomains)
    .where(
      and(
        eq(orgDomains.orgId, connection.orgId),
        eq(orgDomains.domain, domain),
        isNotNull(orgDomains.verifiedAt),
      ),
    )
    .get();
  if (!verified) throw new AppError("sso-email-outside-domains");
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

/** The existing user of the email (its address now proven by the org's IdP), or a new one. */
async function findOrCreateUser(
  deps: Deps,
  email: string,
  displayName: string,
): Promise<{ user: UserRow; created: boolean }> {
  const existing = await findUserByEmail(deps.shards, email);
  if (existing) {
    // The org's IdP inside the org's verified domain is a proof of the address: whatever a stranger set up on an
    // account they never proved (account pre-hijacking) is wiped before it is signed in (src/auth/credential-reset.ts).
    return { user: await proveEmail(deps, existing, "inbox"), created: false };
  }
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

/**
 * The membership this connection keeps: made on the first sign-in (`source: jit`, `provisioned` when the org made
 * the user); on later sign-ins the group-derived role follows the IdP, but only on memberships the connection made
 * (an invitation's or SCIM's role is theirs to change). A membership suspended by SCIM (`active: false`) refuses.
 */
async function ensureMembership(
  deps: Deps,
  connection: SsoConnectionRow,
  userId: string,
  role: string,
  provisioned: boolean,
) {
  const now = deps.now();
  const row = await deps.db
    .insert(orgMembers)
    .values({
      orgId: connection.orgId,
      userId,
      role,
      source: "jit",
      provisioned,
      active: true,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [orgMembers.orgId, orgMembers.userId],
      set: { role, updatedAt: now },
      setWhere: and(eq(orgMembers.source, "jit"), eq(orgMembers.active, true)),
    })
    .returning({ active: orgMembers.active })
    .get();
  if (row) return;
  const current = await deps.db
    .select({ active: orgMembers.active })
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, connection.orgId), eq(orgMembers.userId, userId)))
    .get();
  if (current && !current.active) {
    throw new AppError("forbidden", "your membership of this organization is suspended");
  }
}

/**
 * The user an enterprise sign-in is for: the email checked against the org's verified domains first (nothing is
 * read, made or linked before), then the user found or made, its name refreshed from the IdP, its membership kept.
 */
export async function userThroughConnection(
  deps: Deps,
  connection: SsoConnectionRow,
  identity: SsoIdentity,
): Promise<UserRow> {
  const email = await emailInsideDomains(deps, connection, identity);
  if (!isEmailAllowed(email, deps.config)) throw new AppError("forbidden", "this email is not allowed");
  const displayName = conformingDisplayName(identity.displayName ?? "");
  const found = await findOrCreateUser(deps, email, displayName);
  let user = found.user;
  if (user.disabled) throw new AppError("disabled-user");
  await ensureMembership(
    deps,
    connection,
    user.id,
    roleFor(deps, connection, identity.groups),
    found.created,
  );
  if (!found.created && displayName && displayName !== user.displayName) {
    user =
      (await deps.shards
        .ofUser(user.id)
        .update(users)
        .set({ displayName, updatedAt: deps.now() })
        .where(eq(users.id, user.id))
        .returning()
        .get()) ?? user;
  }
  return user;
}
