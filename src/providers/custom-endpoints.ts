import { AppError, UnavailableError } from "../errors";
import type { Deps } from "../http/deps";
import { checkOutboundUrl, outboundPolicy } from "../lib/outbound-url";
import { discoverIssuer, verifyIdTokenSignature } from "../sso";
import type { ProviderSettings } from "./config";

/**
 * A switched-on provider as a sign-in uses it. A built-in one is its configuration; a custom one
 * (`AUTH_CUSTOM_PROVIDERS`, ./custom-config.ts) gets here what only the network can tell: its endpoints from its
 * issuer's discovery document (the enterprise connections' discovery, src/sso/oidc-discovery.ts: the issuer exactly
 * the configured one, cached five minutes) and the check of its ID token's signature against its JWKS (src/sso/oidc.ts),
 * because its token endpoint is whatever the discovery document or an operator's setting says, not a host this
 * service knows. Every URL it is about to call passes the outbound-URL policy first.
 */
export async function enabledProvider(deps: Deps, provider: string): Promise<ProviderSettings | undefined> {
  const { enabled } = deps.config.providers;
  const settings = Object.hasOwn(enabled, provider) ? enabled[provider] : undefined;
  if (!settings?.custom) return settings;
  const resolved = settings.custom.discover ? await discovered(deps, settings) : settings;
  const policy = outboundPolicy(deps.config);
  for (const url of [resolved.tokenUrl, resolved.userinfoUrl, resolved.oidc?.jwksUrl]) {
    const verdict = url ? checkOutboundUrl(url, policy) : { ok: true as const };
    if (!verdict.ok) {
      throw new AppError("oauth-provider-error", "the provider's endpoints are not allowed", verdict.reason);
    }
  }
  const oidc = resolved.oidc;
  return oidc
    ? {
        ...resolved,
        checkIdToken: async (idToken: string) => {
          await verifyIdTokenSignature(
            deps,
            { issuer: oidc.issuer, jwks_uri: oidc.jwksUrl },
            resolved.clientId,
            idToken,
          );
        },
      }
    : resolved;
}

/**
 * The endpoints of the issuer's discovery document. An issuer that does not answer, or answers "not now" (5xx, 429),
 * is the provider down: 503 with Retry-After, as at its token endpoint, and the same sign-in works once it is back.
 * A document that is wrong (a 404, not JSON, another issuer, endpoints missing or refused) refuses the sign-in: the
 * configuration must change, and asking again would meet the same (no fallback).
 */
async function discovered(deps: Deps, settings: ProviderSettings): Promise<ProviderSettings> {
  const issuer = settings.custom!.issuer!;
  // The operator's own issuer, unlike an org owner's: which of the two it was maps nothing, so it is told.
  const unreadable = (reason: string, down: boolean) =>
    down
      ? new UnavailableError(`provider ${settings.name}: discovery: ${reason}`.slice(0, 300))
      : new AppError("oauth-provider-error", "the provider's discovery failed", reason);
  let server: Awaited<ReturnType<typeof discoverIssuer>>;
  try {
    server = await discoverIssuer(deps, issuer, unreadable);
  } catch (error) {
    if (error instanceof UnavailableError) throw error;
    // Another issuer, an endpoint the policy refuses: one refusal, the reason in the log.
    const reason = error instanceof AppError ? (error.reason ?? error.message) : String(error);
    throw new AppError("oauth-provider-error", "the provider's discovery failed", reason);
  }
  // The client authentication the provider accepts, when it lists them and not the configured one.
  const methods = server.token_endpoint_auth_methods_supported;
  const wanted = settings.definition.clientAuth === "basic" ? "client_secret_basic" : "client_secret_post";
  const other = settings.definition.clientAuth === "basic" ? "client_secret_post" : "client_secret_basic";
  const clientAuth =
    methods && !methods.includes(wanted) && methods.includes(other)
      ? other.endsWith("basic")
        ? "basic"
        : "post"
      : settings.definition.clientAuth;
  return {
    ...settings,
    definition: { ...settings.definition, clientAuth },
    authorizationUrl: server.authorization_endpoint!,
    tokenUrl: server.token_endpoint!,
    userinfoUrl: settings.custom!.userinfoUrl ?? server.userinfo_endpoint,
    oidc: { issuer: server.issuer, jwksUrl: server.jwks_uri! },
  };
}
