import type { Deps } from "../http/deps";
import { currentToken } from "./refresh";
import { hasConsent, noteUse } from "./store";

/**
 * What the token exchange (src/oauth2/vault-exchange.ts) asks the vault, once it has checked the subject token: may
 * this client have this user's token of this provider, and which is it. Every answer, given or refused, is audited
 * (contract operators.md §3: "every release is audited"). Refusals are values, never throws: the exchange turns
 * them into its own errors.
 */

export type Refusal =
  /** The vault is off, or the provider is not switched on here. */
  | "unavailable-provider"
  /** An admin did not allow this client the provider (`vaultProviders`). */
  | "client-not-allowed"
  /** The user has no connection to this provider (never made, or removed). */
  | "no-connection"
  /** The user did not let this client use the connection. */
  | "no-consent"
  /** The provider's token ended and cannot be renewed: the user must connect again. */
  | "expired"
  /** The provider refused the refresh (the user revoked the service's access there). */
  | "refused"
  /** The provider refused this service's own client credentials at refresh: the operator's to fix; nothing changed. */
  | "service-refused"
  /** The provider could not be reached at refresh; nothing stored changed. */
  | "provider-down"
  /** `scope` asked more than the provider granted the connection. */
  | "scope-not-granted";

export type Release =
  | { ok: true; accessToken: string; expiresAt: number | null; scopes: string[] }
  | { ok: false; refusal: Refusal };

export async function releaseProviderToken(
  deps: Deps,
  input: {
    userId: string;
    clientId: string;
    vaultProviders: string[];
    provider: string;
    grantId: string;
    /** Scopes the client asked (none: all the connection has); more than the provider granted is refused. */
    scopes: string[];
  },
): Promise<Release> {
  const { userId, clientId, provider } = input;
  const refuse = (refusal: Refusal): Release => {
    deps.audit({ type: "vault.refused", userId, detail: { provider, clientId, reason: refusal } });
    return { ok: false, refusal };
  };
  const enabled = deps.config.vault.enabled && provider in deps.config.providers.enabled;
  if (!enabled) return refuse("unavailable-provider");
  if (!input.vaultProviders.includes(provider)) return refuse("client-not-allowed");
  // Consent first: a client the user never let in learns nothing, not even whether a connection exists.
  if (!(await hasConsent(deps, userId, provider, clientId))) return refuse("no-consent");
  const current = await currentToken(deps, userId, provider);
  if (!current.ok) {
    const refusal = (
      {
        none: "no-connection",
        expired: "expired",
        refused: "refused",
        "service-refused": "service-refused",
        unavailable: "provider-down",
      } as const
    )[current.reason];
    return refuse(refusal);
  }
  if (input.scopes.some((scope) => !current.scopes.includes(scope))) return refuse("scope-not-granted");
  await noteUse(deps, userId, provider, clientId);
  deps.audit({
    type: "vault.released",
    userId,
    detail: { provider, clientId, grantId: input.grantId, refreshed: current.refreshed },
  });
  const scopes = input.scopes.length > 0 ? input.scopes : current.scopes;
  return { ok: true, accessToken: current.accessToken, expiresAt: current.expiresAt, scopes };
}
