import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { describeIssues } from "../../http/validation";
import {
  addDomain,
  createConnection,
  deleteConnection,
  deleteDomain,
  newConnectionSchema,
  setEnforceSso,
  verifyDomain,
} from "../../sso";
import { formOf, orgAction } from "./org-routes";

/**
 * An organization's enterprise sign-in in the console: the sso feature's services (src/sso/) with the admin API's
 * rules (domains may be marked verified without DNS, for local development and tests) and audit events.
 */

/** A new connection from the form, checked as the admin API checks its body. */
function newConnection(form: Record<string, string>, type: "oidc" | "saml") {
  const candidate =
    type === "oidc"
      ? {
          type,
          issuer: form.issuer,
          clientId: form.clientId,
          clientSecret: form.clientSecret,
          ...(form.scopes ? { scopes: form.scopes.split(/\s+/).filter(Boolean) } : {}),
          defaultRole: form.defaultRole || undefined,
        }
      : {
          type,
          ...(form.metadataUrl ? { metadataUrl: form.metadataUrl } : {}),
          ...(form.metadataXml ? { metadataXml: form.metadataXml } : {}),
          defaultRole: form.defaultRole || undefined,
          allowIdpInitiated: form.allowIdpInitiated === "yes",
        };
  const parsed = newConnectionSchema.safeParse(candidate);
  if (!parsed.success) throw new AppError("invalid-request", describeIssues(parsed.error.issues));
  return parsed.data;
}

const addConnection = (type: "oidc" | "saml") =>
  orgAction(async (c, orgId) => {
    const connection = await createConnection(
      c.var.deps,
      orgId,
      newConnection(await formOf(c, 60_000), type),
    );
    auditAdminAction(c, "org.connection.create", null, { orgId, connectionId: connection.id, type });
    return "connection-added";
  });

export const consoleOrgSsoRoutes = new Hono<AppEnv>()
  .post("/orgs/:id/connections/oidc", addConnection("oidc"))
  .post("/orgs/:id/connections/saml", addConnection("saml"))
  .post(
    "/orgs/:id/connections/:connectionId/delete",
    orgAction(async (c, orgId) => {
      const connectionId = c.req.param("connectionId")!;
      await deleteConnection(c.var.deps, orgId, connectionId);
      auditAdminAction(c, "org.connection.delete", null, { orgId, connectionId });
      return "connection-removed";
    }),
  )
  .post(
    "/orgs/:id/domains/add",
    orgAction(async (c, orgId) => {
      const row = await addDomain(c.var.deps, orgId, (await formOf(c)).domain ?? "");
      auditAdminAction(c, "org.domain.add", null, { orgId, domain: row.domain });
      return "domain-added";
    }),
  )
  .post(
    "/orgs/:id/domains/:domain/verify",
    orgAction(async (c, orgId) => {
      const how = (await formOf(c)).how === "admin" ? "admin" : "dns";
      const row = await verifyDomain(c.var.deps, orgId, c.req.param("domain")!, how);
      auditAdminAction(c, "org.domain.verify", null, { orgId, domain: row.domain, how });
      return "domain-verified";
    }),
  )
  .post(
    "/orgs/:id/domains/:domain/delete",
    orgAction(async (c, orgId) => {
      const domain = c.req.param("domain")!;
      await deleteDomain(c.var.deps, orgId, domain);
      auditAdminAction(c, "org.domain.delete", null, { orgId, domain });
      return "domain-removed";
    }),
  )
  .post(
    "/orgs/:id/enforce-sso",
    orgAction(async (c, orgId) => {
      const enforce = (await formOf(c)).enforce === "on";
      await setEnforceSso(c.var.deps, orgId, enforce);
      auditAdminAction(c, "org.enforce-sso", null, { orgId, enforce });
      return enforce ? "sso-enforced" : "sso-not-enforced";
    }),
  );
