import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { getClient, setAuthorizationDetailsTypes } from "../../oauth2";
import { action, back, chromeOf, page, render } from "./handlers";
import { clientDetailTypesPage } from "./pages-client-detail-types";

/**
 * A client's RFC 9396 authorization details types in the console (docs/agents.md): the same rules as the admin
 * API's `authorizationDetailsTypes`, the change audited like the API's. A refused text comes back on the form with
 * the reason (400), never half-saved.
 */

/** The text of the form, bounded: the schema's own limits (src/oauth2/authorization-details/limits.ts) are smaller. */
const MAX_TEXT = 400_000;

export const consoleClientDetailTypesRoutes = new Hono<AppEnv>()
  .get(
    "/clients/:clientId/authorization-details",
    page(async (c, session) => {
      const client = await getClient(c.var.deps, c.req.param("clientId")!);
      const chrome = await chromeOf(c, session, "clients");
      return render(c, `${client.clientName}: authorization details`, clientDetailTypesPage(chrome, client));
    }),
  )
  .post(
    "/clients/:clientId/authorization-details",
    action(async (c, session) => {
      const clientId = c.req.param("clientId")!;
      const current = await getClient(c.var.deps, clientId);
      const form = await c.req.parseBody();
      const text = typeof form.types === "string" ? form.types.slice(0, MAX_TEXT) : "";
      try {
        let types: unknown;
        try {
          types = JSON.parse(text.trim() || "[]");
        } catch {
          throw new AppError("invalid-request", "authorizationDetailsTypes: not JSON");
        }
        const client = await setAuthorizationDetailsTypes(c.var.deps, clientId, types);
        auditAdminAction(c, "oauth2.client-update", null, {
          clientId,
          authorizationDetailsTypes: client.authorizationDetailsTypes.map((entry) => entry.type),
        });
        return back(c, `/clients/${encodeURIComponent(clientId)}/authorization-details`, "saved");
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        const chrome = await chromeOf(c, session, "clients");
        const body = clientDetailTypesPage(chrome, current, { error: error.message, text });
        return render(c, `${current.clientName}: authorization details`, body, 400);
      }
    }),
  );
