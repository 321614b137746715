import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import type { AppEnv } from "../../http/app-env";
import { getOrg } from "../../orgs";
import { createLink, linkUrl, revokeLink } from "../../setup-links";
import { updateConnection } from "../../sso";
import { action } from "./handlers";
import { formOf, orgAction, showOrg } from "./org-routes";

/**
 * An organization's setup links in the console (contract operators.md §5): the setup-links feature's services with
 * the admin API's rules (any org; the link's maker is the operator) and audit events.
 */

export const consoleSetupLinkRoutes = new Hono<AppEnv>()
  .post(
    "/orgs/:id/setup-links/create",
    action(async (c, session) => {
      const deps = c.var.deps;
      const orgId = (await getOrg(deps, c.req.param("id")!)).id;
      const form = await formOf(c);
      const intents = (["domains", "sso", "scim"] as const).filter((intent) => form[intent] === "yes");
      const days = Math.min(30, Math.max(1, Math.trunc(Number(form.days) || 7)));
      if (intents.length === 0)
        return showOrg(c, session, orgId, { error: "A setup link needs one step at least." });
      const { row, token } = await createLink(deps, orgId, { intents, expiresIn: days * 86400 }, null);
      const detail = { orgId, linkId: row.id, intents: row.intents, expiresAt: row.expiresAt };
      deps.audit({ type: "setup-link.created", userId: null, detail });
      auditAdminAction(c, "setup-link.create", null, detail);
      // The answer to the post shows the link, once: a redirect would need it in a URL or stored.
      return showOrg(c, session, orgId, { newSetupLinkUrl: linkUrl(deps, token) });
    }),
  )
  .post(
    "/orgs/:id/setup-links/:linkId/revoke",
    orgAction(async (c, orgId) => {
      const row = await revokeLink(c.var.deps, orgId, c.req.param("linkId")!);
      c.var.deps.audit({ type: "setup-link.revoked", userId: null, detail: { orgId, linkId: row.id } });
      auditAdminAction(c, "setup-link.revoke", null, { orgId, linkId: row.id });
      return "setup-link-revoked";
    }),
  )
  .post(
    "/orgs/:id/setup-links/connections/:connectionId/enable",
    // Through the sso feature's own rule: a link's connection is turned on only after a successful test.
    orgAction(async (c, orgId) => {
      const connectionId = c.req.param("connectionId")!;
      await updateConnection(c.var.deps, orgId, connectionId, { enabled: true });
      auditAdminAction(c, "org.connection.enable", null, { orgId, connectionId });
      return "connection-enabled";
    }),
  );
