import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { findOrg, OWNERS, requireOrgRole } from "../orgs";

/**
 * Who may manage an organization's SCIM tokens: its owners (contract organizations.md §3), with the organizations'
 * own answers: no active membership is 404 (an outsider can't tell the org exists), another role 403.
 */
export async function requireOrgOwner(deps: Pick<Deps, "db">, orgId: string, userId: string): Promise<void> {
  await requireOrgRole(deps, orgId, userId, OWNERS);
}

/** The admin API acts on any organization, but only on one that exists. */
export async function requireOrg(deps: Pick<Deps, "db">, orgId: string): Promise<void> {
  if (!(await findOrg(deps, orgId))) throw new AppError("not-found", "no such organization");
}
