import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { getClient, setClientVaultProviders, type WireClient } from "../../oauth2";
import { action, back, type Ctx, chromeOf, page, render } from "./handlers";
import { clientVaultPage } from "./pages-vault";
import type { ConsoleSession } from "./session";

/** A client's token-vault providers in the console: the admin API's `vaultProviders`, audited like its changes. */

async function show(c: Ctx, session: ConsoleSession, client: WireClient, error?: string) {
  const { config } = c.var;
  const view = {
    vaultEnabled: config.vault.enabled,
    providers: Object.keys(config.providers.enabled).sort(),
    error,
  };
  const chrome = await chromeOf(c, session, "clients");
  return render(
    c,
    `Token vault: ${client.clientName}`,
    clientVaultPage(chrome, client, view),
    error ? 400 : 200,
  );
}

export const consoleVaultRoutes = new Hono<AppEnv>()
  .get(
    "/clients/:clientId/vault",
    page(async (c, session) => show(c, session, await getClient(c.var.deps, c.req.param("clientId")!))),
  )
  .post(
    "/clients/:clientId/vault",
    action(async (c, session) => {
      const clientId = c.req.param("clientId")!;
      const current = await getClient(c.var.deps, clientId);
      const form = await c.req.parseBody({ all: true });
      const value = form.vaultProviders;
      const providers = (Array.isArray(value) ? value : value === undefined ? [] : [value])
        .filter((item): item is string => typeof item === "string")
        .slice(0, 20);
      try {
        await setClientVaultProviders(c.var.deps, clientId, providers);
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        return show(c, session, current, error.message);
      }
      auditAdminAction(c, "oauth2.client-update", null, { clientId, vaultProviders: providers });
      return back(c, `/clients/${encodeURIComponent(clientId)}/vault`, "saved");
    }),
  );
