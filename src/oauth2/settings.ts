import { z } from "zod";
import type { CoreConfig, FeatureSettingsSlice } from "../config";
import { ConfigError } from "../errors";
import { bool, list, seconds, settingsSlice, url } from "../settings/kit";

/** The OAuth 2.0 / OpenID Connect authorization server (contract §3.5); clients are managed through §10. */
const vars = z.object({
  AUTH_OAUTH2_PROVIDER_ENABLED: bool(false),
  AUTH_OAUTH2_PROVIDER_LOGIN_URL: url.optional(),
  /** Defaults of a new client's token lifetimes, in seconds. */
  AUTH_OAUTH2_PROVIDER_ACCESS_TOKEN_TTL: seconds(900).refine(
    (n) => n >= 60 && n <= 86_400,
    "must be 60 to 86400",
  ),
  AUTH_OAUTH2_PROVIDER_REFRESH_TOKEN_TTL: seconds(2_592_000).refine(
    (n) => n >= 60 && n <= 31_536_000,
    "must be 60 to 31536000",
  ),
  /**
   * Dynamic client registration (RFC 7591, contract §3.6): `off`, `authenticated` (a signed-in user registers clients
   * of their own) or `open` (anyone: what MCP hosts and CLIs meeting the server for the first time need).
   */
  AUTH_OAUTH2_PROVIDER_REGISTRATION: z.enum(["off", "authenticated", "open"]).default("off"),
  /** Seconds a client registered without an admin may go unused before the daily cron deletes it (90 days). */
  AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL: seconds(7_776_000),
  /** The resources (RFC 8707) tokens may be bound to; empty: the storage API's URL. */
  AUTH_OAUTH2_PROVIDER_RESOURCES: list(),
  /** Client ID metadata documents (contract §3.6): `on` or `off`; unset: on exactly where registration is `open`. */
  AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS: z.enum(["on", "off"]).optional(),
  /** RFC 9126 §5: every client's authorization requests must come through PAR (per client: its own switch). */
  AUTH_OAUTH2_PROVIDER_REQUIRE_PAR: bool(false),
  /** RFC 9449 §8: the token endpoint asks for a server nonce in DPoP proofs (`use_dpop_nonce`). */
  AUTH_OAUTH2_PROVIDER_DPOP_NONCE: bool(false),
  /** OpenID CIBA (src/oauth2/ciba/): requests one user may have waiting at once, from every client together. */
  AUTH_CIBA_MAX_PENDING_PER_USER: z.coerce.number().int().min(1).max(100).default(3),
});

/**
 * The resource indicators (RFC 8707) this deployment serves: `AUTH_OAUTH2_PROVIDER_RESOURCES`, or the storage API.
 * Absolute URIs without a fragment; compared as written (a trailing slash makes another resource).
 */
function resources(listed: string[], core: CoreConfig): string[] {
  const all =
    listed.length > 0 ? listed : [`${core.urls.storage.replace(/\/$/, "")}${core.urls.storagePrefix}`];
  for (const resource of all) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(resource);
    } catch {}
    if (!parsed || parsed.hash || resource.includes("#")) {
      throw new ConfigError(
        `invalid configuration: AUTH_OAUTH2_PROVIDER_RESOURCES: ${resource} is not an absolute URI without a fragment`,
      );
    }
  }
  return [...new Set(all)];
}

const resolve = (data: z.output<typeof vars>, core: CoreConfig) => ({
  oauth2: {
    enabled: data.AUTH_OAUTH2_PROVIDER_ENABLED,
    /** An external login UI (`AUTH_OAUTH2_PROVIDER_LOGIN_URL`); unset: the built-in pages (src/pages/). */
    loginUrl: data.AUTH_OAUTH2_PROVIDER_LOGIN_URL,
    accessTokenTtl: data.AUTH_OAUTH2_PROVIDER_ACCESS_TOKEN_TTL,
    refreshTokenTtl: data.AUTH_OAUTH2_PROVIDER_REFRESH_TOKEN_TTL,
    registration: data.AUTH_OAUTH2_PROVIDER_REGISTRATION,
    registrationTtl: data.AUTH_OAUTH2_PROVIDER_REGISTRATION_TTL,
    /** The resources tokens may be bound to (RFC 8707). */
    resources: resources(data.AUTH_OAUTH2_PROVIDER_RESOURCES, core),
    /** Whether an https `client_id` names a metadata document (a registration by another name). */
    clientIdDocuments: data.AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS
      ? data.AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS === "on"
      : data.AUTH_OAUTH2_PROVIDER_REGISTRATION === "open",
    requirePar: data.AUTH_OAUTH2_PROVIDER_REQUIRE_PAR,
    dpopNonce: data.AUTH_OAUTH2_PROVIDER_DPOP_NONCE,
    cibaMaxPendingPerUser: data.AUTH_CIBA_MAX_PENDING_PER_USER,
  },
});

export const oauth2Settings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type OAuth2Settings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends OAuth2Settings {}
}
