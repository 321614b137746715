import { listLinks, toWireLink } from "../../setup-links";
import type { Ctx } from "./handlers";
import type { Chrome } from "./pages";
import { setupLinksSection } from "./pages-setup-links";

/** The section of the org's page (src/admin/console/org-routes.ts `showOrg`). */
export async function setupLinksSectionOf(
  c: Ctx,
  chrome: Chrome,
  orgPathname: string,
  orgId: string,
  newUrl?: string,
) {
  const deps = c.var.deps;
  const links = await Promise.all((await listLinks(deps, orgId)).map((row) => toWireLink(deps, row)));
  return setupLinksSection(chrome, orgPathname, { links, newUrl });
}
