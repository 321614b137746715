import { z } from "zod";
import type { FeatureSettingsSlice } from "../config";
import { ConfigError } from "../errors";
import { PROVIDER_NAMES, type ProviderName } from "../providers";
import { bool, settingsSlice } from "../settings/kit";

/**
 * The token vault (contract operators.md §3): `AUTH_TOKEN_VAULT_ENABLED`, and per provider the scopes a connection
 * asks besides the sign-in's (`AUTH_PROVIDER_<NAME>_VAULT_SCOPES`) and its RFC 7009 revocation endpoint
 * (`AUTH_PROVIDER_<NAME>_REVOCATION_URL`, known for Google), read by prefix like the providers' own variables.
 */
const vars = z.object({ AUTH_TOKEN_VAULT_ENABLED: bool(false) });

/**
 * What each provider needs to hand out a refresh token (its "offline access"): Google wants `access_type=offline`,
 * and `prompt=consent` so that a second connection gets a refresh token again; Microsoft's endpoints the
 * `offline_access` scope (OIDC Core §11). Others give long-lived tokens, or a refresh token unasked.
 */
const OFFLINE: Partial<Record<ProviderName, { params?: Record<string, string>; scopes?: string[] }>> = {
  google: { params: { access_type: "offline", prompt: "consent" } },
  azuread: { scopes: ["offline_access"] },
  entraid: { scopes: ["offline_access"] },
  windowslive: { scopes: ["offline_access"] },
};

/** Providers with an RFC 7009 endpoint of their own (Google's is documented as such). */
const REVOCATION: Partial<Record<ProviderName, string>> = {
  google: "https://oauth2.googleapis.com/revoke",
};

export interface VaultProvider {
  /** Scopes asked besides the provider's sign-in scopes, offline access included. */
  scopes: string[];
  params: Record<string, string>;
  /** Null: the provider has no revocation endpoint; a disconnection only forgets the tokens. */
  revocationUrl: string | null;
}

function read(env: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = env[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function revocationUrl(env: Readonly<Record<string, unknown>>, name: ProviderName): string | null {
  const variable = `AUTH_PROVIDER_${name.toUpperCase()}_REVOCATION_URL`;
  const value = read(env, variable) ?? REVOCATION[name];
  if (!value) return null;
  try {
    const url = new URL(value);
    const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) throw new Error();
  } catch {
    throw new ConfigError(`invalid configuration: ${variable} must be an https URL (http only on loopback)`);
  }
  return value;
}

const resolve = (data: z.output<typeof vars>, _core: unknown, env: Readonly<Record<string, unknown>>) => {
  const providers: Partial<Record<ProviderName, VaultProvider>> = {};
  for (const name of PROVIDER_NAMES) {
    const extra = read(env, `AUTH_PROVIDER_${name.toUpperCase()}_VAULT_SCOPES`)
      ?.split(/[\s,]+/)
      .filter(Boolean);
    providers[name] = {
      scopes: [...new Set([...(extra ?? []), ...(OFFLINE[name]?.scopes ?? [])])],
      params: OFFLINE[name]?.params ?? {},
      revocationUrl: revocationUrl(env, name),
    };
  }
  return { vault: { enabled: data.AUTH_TOKEN_VAULT_ENABLED, providers } };
};

export const vaultSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type VaultSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends VaultSettings {}
}
