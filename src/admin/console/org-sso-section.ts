import { orgRoles } from "../../auth";
import { listConnections, listDomains, toWireConnection, toWireDomain } from "../../sso";
import type { Ctx } from "./handlers";
import type { Chrome } from "./pages";
import { ssoSection } from "./pages-org-sso";

/** The enterprise sign-in section of the org's page. */
export async function ssoSectionOf(
  c: Ctx,
  chrome: Chrome,
  orgPathname: string,
  org: { id: string; enforceSso: boolean },
) {
  const deps = c.var.deps;
  const [connections, domains] = await Promise.all([
    listConnections(deps, org.id),
    listDomains(deps, org.id),
  ]);
  return ssoSection(chrome, orgPathname, {
    connections: connections.map((row) => toWireConnection(deps, row)),
    domains: domains.map(toWireDomain),
    enforceSso: org.enforceSso,
    roles: orgRoles(deps.config),
  });
}
