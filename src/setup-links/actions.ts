import { isUniqueViolation } from "../db/errors";
import type { SetupLinkRow, SsoConnectionRow } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { createScimToken, listScimTokens } from "../scim";
import {
  addDomain,
  connectionsOfLink,
  createConnection,
  getDomain,
  newConnectionSchema,
  normalDomain,
  serveDomainThroughLink,
  verifyDomain,
} from "../sso";
import type { Intent } from "./links";
import { noteLinkDomain } from "./links";

/**
 * What a setup link may do (contract operators.md §5), each bounded and audited: claim and verify domains, make SSO
 * connections that stay off (serving only the link's verified domains), make SCIM tokens that give no admin role.
 * Every action is on the link's own organization and on what the link itself made: another org's or an existing
 * connection is `not-found`, as if it did not exist. Nothing here edits or replaces what the link did not make.
 */

const MAX_CONNECTIONS_PER_LINK = 5;
const MAX_TOKENS_PER_LINK = 5;
const MAX_DOMAINS_PER_LINK = 20;

/** The audit event of a link's use: who acted is the link (no user), in its org. */
export function auditLink(
  deps: Deps,
  link: SetupLinkRow,
  what: string,
  detail: Record<string, unknown> = {},
) {
  deps.audit({
    type: `setup-link.${what}`,
    userId: null,
    detail: { orgId: link.orgId, linkId: link.id, ...detail },
  });
}

export function requireIntent(link: SetupLinkRow, intent: Intent) {
  if (!link.intents.includes(intent))
    throw new AppError("forbidden", `this setup link does not allow ${intent}`);
}

export type ClaimOutcome = "claimed" | "verified-before";

/** Claims a domain for the link's org; one verified for the org outside this link is not the link's to serve. */
export async function claimDomain(deps: Deps, link: SetupLinkRow, raw: string): Promise<ClaimOutcome> {
  requireIntent(link, "domains");
  const domain = normalDomain(raw);
  if (link.claimed.length >= MAX_DOMAINS_PER_LINK && !link.claimed.includes(domain)) {
    throw new AppError("invalid-request", `a setup link claims at most ${MAX_DOMAINS_PER_LINK} domains`);
  }
  const row = await addDomain(deps, link.orgId, domain);
  if (row.verifiedAt !== null && !link.domains.includes(domain)) return "verified-before";
  await noteLinkDomain(deps, link.id, "claimed", domain);
  auditLink(deps, link, "domain-claimed", { domain });
  return "claimed";
}

/** Looks up the TXT record of a domain this link claimed; verified, it joins the domains its connections serve. */
export async function checkDomain(deps: Deps, link: SetupLinkRow, raw: string): Promise<string> {
  requireIntent(link, "domains");
  const domain = raw.trim().toLowerCase();
  if (!link.claimed.includes(domain))
    throw new AppError("not-found", "no such domain claimed through this link");
  // Verified meanwhile outside the link (an owner, the operator): no TXT record was proven through the link.
  const before = await getDomain(deps, link.orgId, domain);
  if (before.verifiedAt !== null && !link.domains.includes(domain)) {
    throw new AppError("domain-already-verified", "verified for this organization outside this link");
  }
  await verifyDomain(deps, link.orgId, domain, "dns");
  await noteLinkDomain(deps, link.id, "domains", domain);
  await serveDomainThroughLink(deps, link.id, domain);
  auditLink(deps, link, "domain-verified", { domain });
  return domain;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A new connection, off, serving only the link's verified domains, under the id its guide showed (`connectionId`, a
 * fresh UUID: an id already taken is refused, so nothing existing is replaced).
 */
export async function createLinkConnection(
  deps: Deps,
  link: SetupLinkRow,
  connectionId: string,
  input: unknown,
): Promise<SsoConnectionRow> {
  requireIntent(link, "sso");
  if (!UUID.test(connectionId)) throw new AppError("invalid-request", "connectionId: not a fresh id");
  const parsed = newConnectionSchema.safeParse(input);
  if (!parsed.success)
    throw new AppError("invalid-request", parsed.error.issues[0]?.message ?? "invalid connection");
  const made = await connectionsOfLink(deps, link.orgId, link.id);
  if (made.length >= MAX_CONNECTIONS_PER_LINK) {
    throw new AppError(
      "invalid-request",
      `a setup link makes at most ${MAX_CONNECTIONS_PER_LINK} connections`,
    );
  }
  // The IdP's admin sets roles in the IdP, not here: the connection's members start as plain members.
  const { defaultRole: _role, roleMapping: _mapping, enabled: _enabled, ...settings } = parsed.data;
  let row: SsoConnectionRow;
  try {
    row = await createConnection(deps, link.orgId, settings, {
      setupLinkId: link.id,
      domains: [...link.domains],
      connectionId,
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError("invalid-request", "connectionId: this id is taken; start again");
    }
    throw error;
  }
  auditLink(deps, link, "connection-created", { connectionId: row.id, type: row.type });
  return row;
}

/** The link's own connection `id`; any other (another org's, or one the link did not make) is `not-found`. */
export async function linkConnection(deps: Deps, link: SetupLinkRow, id: string): Promise<SsoConnectionRow> {
  requireIntent(link, "sso");
  const row = (await connectionsOfLink(deps, link.orgId, link.id)).find((connection) => connection.id === id);
  if (!row) throw new AppError("not-found", "no such connection made through this link");
  return row;
}

/** A SCIM token of the link's org that gives no `owner` or `admin` role; shown once. */
export async function makeScimToken(deps: Deps, link: SetupLinkRow): Promise<string> {
  requireIntent(link, "scim");
  const made = (await listScimTokens(deps, link.orgId)).filter((token) => token.setupLinkId === link.id);
  if (made.length >= MAX_TOKENS_PER_LINK) {
    throw new AppError("invalid-request", `a setup link makes at most ${MAX_TOKENS_PER_LINK} SCIM tokens`);
  }
  const { id, token } = await createScimToken(deps, link.orgId, "setup link", link.id);
  auditLink(deps, link, "scim-token-created", { tokenId: id });
  return token;
}

export const tokensOfLink = async (deps: Deps, link: SetupLinkRow) =>
  (await listScimTokens(deps, link.orgId)).filter((token) => token.setupLinkId === link.id);
