import { inArray } from "drizzle-orm";
import { resolveRedirectTo } from "../auth";
import { oauth2Clients } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { withQuery } from "../lib/redirect";
import { finishConnection, isProviderName, openConnection, revokeConnection } from "../providers";
import { keepConnection, openTokens, removeConnection } from "./store";

/**
 * Connecting an account and letting clients use it, and removing it (contract operators.md §3). The steps through
 * the provider are the providers feature's (src/providers/connections.ts); the vault keeps what comes back.
 */

export const connectionPath = (provider: string, leg: "start" | "callback") =>
  `/user/connections/${provider}/${leg}`;

/** The vault is on and the provider switched on here; else 409 `disabled-endpoint`, as other switched-off parts. */
export function vaultProvider(deps: Deps, provider: string) {
  if (!deps.config.vault.enabled) throw new AppError("disabled-endpoint", "the token vault is not enabled");
  const settings = isProviderName(provider) ? deps.config.vault.providers[provider] : undefined;
  if (!settings || !isProviderName(provider) || !deps.config.providers.enabled[provider]) {
    throw new AppError("disabled-endpoint", `the provider ${provider.slice(0, 40)} is not enabled`);
  }
  return settings;
}

/** The clients named to use the connection: each must exist and be allowed the provider by an admin. */
async function allowedClients(deps: Deps, provider: string, clientIds: string[]): Promise<string[]> {
  const wanted = [...new Set(clientIds)];
  if (wanted.length === 0) return [];
  const rows = await deps.db
    .select({ clientId: oauth2Clients.clientId, vaultProviders: oauth2Clients.vaultProviders })
    .from(oauth2Clients)
    .where(inArray(oauth2Clients.clientId, wanted));
  const allowed = new Set(
    rows.filter((row) => row.vaultProviders.includes(provider)).map((row) => row.clientId),
  );
  const refused = wanted.filter((id) => !allowed.has(id));
  if (refused.length > 0) {
    throw new AppError(
      "invalid-request",
      `clientIds: not allowed to use ${provider}: ${refused.join(" ").slice(0, 200)}`,
    );
  }
  return wanted;
}

/**
 * `POST /user/connections/{p}`: a pending connection for the signed-in user, and the start URL the app opens in the
 * user's browser (it binds that browser, then goes to the provider's consent with the vault's scopes and offline
 * access). `redirectTo` is allow-listed as every other; `clientIds` are the OAuth2 clients the user lets use it.
 */
export async function beginConnection(
  deps: Deps,
  userId: string,
  provider: string,
  body: { redirectTo?: string; clientIds?: string[] },
): Promise<{ url: string }> {
  const settings = vaultProvider(deps, provider);
  const returnTo = resolveRedirectTo(deps.config, body.redirectTo);
  const clientIds = await allowedClients(deps, provider, body.clientIds ?? []);
  const state = await openConnection(deps, provider, {
    userId,
    scopes: settings.scopes,
    params: settings.params,
    returnTo,
    context: { clientIds },
  });
  if (!state) throw new AppError("disabled-endpoint", `the provider ${provider} is not enabled`);
  return { url: withQuery(deps.config.urls.auth(connectionPath(provider, "start")), { state }) };
}

/** The provider's callback: keeps the tokens and sends the browser back with `connected` (or `error`). */
export async function completeConnection(
  deps: Deps,
  provider: string,
  params: Record<string, string>,
  browserHash: string | null,
): Promise<string> {
  const redirectUri = deps.config.urls.auth(connectionPath(provider, "callback"));
  const outcome = await finishConnection(deps, provider, params, browserHash, redirectUri);
  if (!outcome.ok) {
    return withQuery(outcome.returnTo ?? deps.config.urls.defaultRedirect, {
      error: outcome.code,
      errorDescription: outcome.detail,
    });
  }
  const granted =
    typeof outcome.tokens.answer.scope === "string" ? outcome.tokens.answer.scope.split(" ") : null;
  const clientIds = (outcome.context.clientIds as string[] | undefined) ?? [];
  await keepConnection(deps, {
    userId: outcome.userId,
    provider,
    providerUserId: outcome.profile.id,
    providerEmail: outcome.profile.email ?? null,
    tokens: outcome.tokens,
    scopes: (granted ?? outcome.asked).filter(Boolean),
    clientIds,
  });
  deps.audit({
    type: "vault.connected",
    userId: outcome.userId,
    detail: { provider, providerUserId: outcome.profile.id, clientIds },
  });
  return withQuery(outcome.returnTo, { connected: provider });
}

/**
 * `DELETE /user/connections/{p}`: forgotten here at once, and revoked at the provider (RFC 7009) where it has an
 * endpoint: the refresh token, which ends the grant there (§2.1), else the access token. 404 when none.
 */
export async function disconnect(
  deps: Deps,
  userId: string,
  provider: string,
): Promise<{ revokedAtProvider: boolean }> {
  const settings = vaultProvider(deps, provider);
  const row = await removeConnection(deps, userId, provider);
  if (!row) throw new AppError("not-found", `no ${provider} connection`);
  let revokedAtProvider = false;
  if (settings.revocationUrl) {
    const tokens = await openTokens(deps, row);
    revokedAtProvider = await revokeConnection(
      deps,
      provider,
      tokens.refreshToken ?? tokens.accessToken,
      settings.revocationUrl,
    );
  }
  deps.audit({ type: "vault.disconnected", userId, detail: { provider, revokedAtProvider } });
  return { revokedAtProvider };
}
