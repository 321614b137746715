import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { describeIssues } from "../../http/validation";
import {
  clientBodySchema,
  clientUsage,
  createClient,
  deleteClient,
  getClient,
  listClients,
  replaceClient,
  rotateClientSecret,
  type WireClient,
} from "../../oauth2";
import { action, back, type Ctx, chromeOf, page, render } from "./handlers";
import { clientPage, clientsPage } from "./pages-clients";
import type { ConsoleSession } from "./session";

/**
 * OAuth2 clients in the console: the same services and rules as the admin API (`clientBodySchema`), every change
 * audited like the API's. A new or rotated secret is shown on the page that answers the post, once, never in a URL.
 */

const clientPath = (clientId: string) => `/clients/${encodeURIComponent(clientId)}`;

/** The form as the admin API's body: redirect URIs and FedCM origins one per line, scopes as checkboxes. */
async function clientBody(c: Ctx) {
  const form = await c.req.parseBody({ all: true });
  const one = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : "");
  const many = (name: string) => {
    const value = form[name];
    return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
      (item): item is string => typeof item === "string",
    );
  };
  const lines = (name: string) =>
    one(name)
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean);
  const parsed = clientBodySchema.safeParse({
    clientName: one("clientName").slice(0, 200),
    redirectUris: lines("redirectUris"),
    scopes: many("scopes"),
    tokenEndpointAuthMethod: one("tokenEndpointAuthMethod") || undefined,
    logoUri: one("logoUri").trim().slice(0, 2100) || null,
    fedcmOrigins: lines("fedcmOrigins"),
    policyUri: one("policyUri").trim().slice(0, 2100) || null,
    tosUri: one("tosUri").trim().slice(0, 2100) || null,
  });
  if (!parsed.success) throw new AppError("invalid-request", describeIssues(parsed.error.issues));
  return parsed.data;
}

async function showClient(
  c: Ctx,
  session: ConsoleSession,
  client: WireClient,
  options: { secret?: string; error?: string } = {},
  status: 200 | 400 = 200,
) {
  const usage = await clientUsage(c.var.deps, client.clientId);
  return render(
    c,
    client.clientName,
    clientPage(await chromeOf(c, session, "clients"), client, usage, options),
    status,
  );
}

export const consoleClientRoutes = new Hono<AppEnv>()
  .get(
    "/clients",
    page(async (c, session) => {
      const clients = await listClients(c.var.deps, { limit: 500 });
      return render(c, "OAuth2 clients", clientsPage(await chromeOf(c, session, "clients"), clients.items));
    }),
  )
  .post(
    "/clients/create",
    action(async (c, session) => {
      try {
        const client = await createClient(c.var.deps, await clientBody(c));
        auditAdminAction(c, "oauth2.client-create", null, { clientId: client.clientId });
        return showClient(c, session, client, { secret: client.clientSecret ?? undefined });
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        const clients = await listClients(c.var.deps, { limit: 500 });
        const chrome = await chromeOf(c, session, "clients");
        return render(c, "OAuth2 clients", clientsPage(chrome, clients.items, { error: error.message }), 400);
      }
    }),
  )
  .get(
    "/clients/:clientId",
    page(async (c, session) => showClient(c, session, await getClient(c.var.deps, c.req.param("clientId")!))),
  )
  .post(
    "/clients/:clientId/edit",
    action(async (c, session) => {
      const clientId = c.req.param("clientId")!;
      const current = await getClient(c.var.deps, clientId);
      try {
        const body = await clientBody(c);
        // The form does not show every setting: those it does not show stay as they are.
        const client = await replaceClient(c.var.deps, clientId, {
          ...body,
          grantTypes: current.grantTypes as typeof body.grantTypes,
          applicationType: current.applicationType,
          resources: current.resources ?? undefined,
          accessTokenLifetime: current.accessTokenLifetime,
          refreshTokenLifetime: current.refreshTokenLifetime,
          vaultProviders: current.vaultProviders,
          // CIBA's settings have their own form (client-ciba.ts).
          backchannelTokenDeliveryMode: current.backchannelTokenDeliveryMode,
          backchannelClientNotificationEndpoint: current.backchannelClientNotificationEndpoint,
          backchannelOrganization: current.backchannelOrganization,
          // Set on their own screen (client-detail-types-routes.ts).
          authorizationDetailsTypes:
            current.authorizationDetailsTypes as typeof body.authorizationDetailsTypes,
        });
        auditAdminAction(c, "oauth2.client-update", null, { clientId });
        if (client.clientSecret) return showClient(c, session, client, { secret: client.clientSecret });
        return back(c, clientPath(clientId), "saved");
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        return showClient(c, session, current, { error: error.message }, 400);
      }
    }),
  )
  .post(
    "/clients/:clientId/rotate-secret",
    action(async (c, session) => {
      const clientId = c.req.param("clientId")!;
      const { clientSecret } = await rotateClientSecret(c.var.deps, clientId);
      auditAdminAction(c, "oauth2.client-secret-rotate", null, { clientId });
      return showClient(c, session, await getClient(c.var.deps, clientId), { secret: clientSecret });
    }),
  )
  .post(
    "/clients/:clientId/delete",
    action(async (c) => {
      const form = await c.req.parseBody();
      if (form.confirm !== "yes") throw new AppError("invalid-request", "confirm the deletion");
      const clientId = c.req.param("clientId")!;
      await deleteClient(c.var.deps, clientId);
      auditAdminAction(c, "oauth2.client-delete", null, { clientId });
      return back(c, "/clients", "client-deleted");
    }),
  );
