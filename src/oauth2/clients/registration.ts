import { and, eq } from "drizzle-orm";
import { base64url } from "jose";
import { z } from "zod";
import { removeClientRows } from "../../db/client-rows";
import { type OAuth2ClientRow, oauth2Clients } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex, timingSafeEqualString } from "../../lib/crypto";
import { checkOutboundUrl, outboundPolicy } from "../../lib/outbound-url";
import { OAuth2Error } from "../errors";
import { REGISTRATION_TOKEN_PREFIX } from "../token-prefixes";
import { hasSecret, insertClient } from "./admin-clients";
import { forgetOAuth2Client } from "./client-cache";
import {
  AUTH_METHODS,
  clientNameSchema,
  DEFAULT_SCOPES,
  DELEGATION_GRANTS,
  GRANT_TYPES,
  inferredApplicationType,
  publicJwksSchema,
  SUPPORTED_SCOPES,
} from "./client-schema";
import { LOOPBACK_HOSTS } from "./redirect-uris";

/**
 * Dynamic client registration (RFC 7591) and its management protocol (RFC 7592), contract §3.6: an MCP host or a CLI
 * meeting this server for the first time registers itself, then reads, replaces or deletes its registration with the
 * registration access token it got (stored as SHA-256 only). Who may register is `AUTH_OAUTH2_PROVIDER_REGISTRATION`.
 */

const REFUSED_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:", "blob:", "about:"]);

const invalidMetadata = (why: string) => new OAuth2Error("invalid_client_metadata", why);
const invalidRedirect = (why: string) => new OAuth2Error("invalid_redirect_uri", why);

/**
 * RFC 7591 §2 client metadata; fields this server does not know are ignored (§2 requires it), every known one is
 * bounded. `null` counts as absent, as some clients send it.
 */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);
const metadataSchema = z.looseObject({
  redirect_uris: optional(z.array(z.string().max(2048)).max(20)),
  client_name: optional(clientNameSchema),
  application_type: optional(z.enum(["web", "native"])),
  token_endpoint_auth_method: optional(z.string().max(100)),
  grant_types: optional(z.array(z.string().max(200)).max(10)),
  response_types: optional(z.array(z.string().max(50)).max(5)),
  scope: optional(z.string().max(1000)),
  client_uri: optional(z.string().max(2048)),
  logo_uri: optional(z.string().max(2048)),
  contacts: optional(z.array(z.email().max(254)).max(10)),
  software_id: optional(z.string().max(200)),
  software_version: optional(z.string().max(100)),
  dpop_bound_access_tokens: optional(z.boolean()),
  require_pushed_authorization_requests: optional(z.boolean()),
  post_logout_redirect_uris: optional(z.array(z.string().max(2048)).max(20)),
  backchannel_logout_uri: optional(z.string().max(2048)),
  backchannel_logout_session_required: optional(z.boolean()),
  jwks: optional(publicJwksSchema),
  jwks_uri: optional(z.string().max(2048)),
});

/** The settings a valid registration asks for, as the client row holds them. */
export type RegisteredSettings = Pick<
  OAuth2ClientRow,
  | "clientName"
  | "redirectUris"
  | "scopes"
  | "grantTypes"
  | "tokenEndpointAuthMethod"
  | "applicationType"
  | "clientUri"
  | "logoUri"
  | "contacts"
  | "softwareId"
  | "softwareVersion"
  | "dpopBoundAccessTokens"
  | "requirePushedAuthorizationRequests"
  | "postLogoutRedirectUris"
  | "backchannelLogoutUri"
  | "backchannelLogoutSessionRequired"
  | "jwks"
  | "jwksUri"
>;

function checkRedirectUri(uri: string, applicationType: "web" | "native"): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidRedirect(`not an absolute URI: ${uri.slice(0, 200)}`);
  }
  if (uri.includes("#")) throw invalidRedirect("redirect URIs must not have a fragment");
  if (url.username || url.password) throw invalidRedirect("redirect URIs must not hold credentials");
  if (REFUSED_SCHEMES.has(url.protocol)) throw invalidRedirect(`the ${url.protocol} scheme is refused`);
  if (url.protocol === "https:") return;
  if (url.protocol === "http:") {
    if (applicationType === "native" && LOOPBACK_HOSTS.has(url.hostname)) return;
    throw invalidRedirect(
      applicationType === "native"
        ? "http is allowed only on a loopback host (127.0.0.1, [::1]); use https"
        : "a web client's redirect URIs are https; a loopback http URI needs application_type native",
    );
  }
  // A private-use scheme of a native app: reverse-domain, so it holds a dot (RFC 8252 §7.1).
  if (applicationType !== "native" || !url.protocol.slice(0, -1).includes(".")) {
    throw invalidRedirect(
      "a private-use scheme is for native clients, in reverse-domain form (com.example.app:/callback)",
    );
  }
}

/** An https page about the client (its home, its logo); loopback http on a development server. */
function checkPageUri(name: string, uri: string | undefined, deps: Deps): string | null {
  if (uri === undefined) return null;
  let url: URL | undefined;
  try {
    url = new URL(uri);
  } catch {}
  const allowed =
    url?.protocol === "https:" ||
    (url?.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname) && deps.config.development);
  if (!allowed) throw invalidMetadata(`${name} must be an https URL`);
  return uri;
}

/**
 * Contract §3.6: a client that registered itself (or names a metadata document) acts for people who sign in and
 * allow it. Acting for itself (`client_credentials`) mints tokens for the deployment's APIs with nobody's consent, so
 * it is for clients an admin created or allowed (admin API `grantTypes`); such a client's own RFC 7592 update may
 * keep the grant, never add it back.
 */
const MACHINE_GRANT = "client_credentials";

/** Validates RFC 7591 metadata into client settings, with the RFC's defaults. */
export function registeredSettings(
  deps: Deps,
  body: unknown,
  options: { adminAllowedClientCredentials?: boolean; adminAllowedGrants?: string[] } = {},
): RegisteredSettings {
  const parsed = metadataSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidMetadata(
      issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "not client metadata",
    );
  }
  const metadata = parsed.data;
  const redirectUris = [...new Set(metadata.redirect_uris ?? [])];
  const applicationType = metadata.application_type ?? inferredApplicationType(redirectUris);
  const grantTypes = [...new Set(metadata.grant_types ?? ["authorization_code"])];
  const unknownGrant = grantTypes.find((grant) => !(GRANT_TYPES as readonly string[]).includes(grant));
  if (unknownGrant) throw invalidMetadata(`grant type not supported: ${unknownGrant.slice(0, 100)}`);
  if (grantTypes.includes(MACHINE_GRANT) && !options.adminAllowedClientCredentials) {
    throw invalidMetadata(
      "client_credentials is for machine clients an administrator creates or allows; a registered client may use " +
        "authorization_code, refresh_token and the device grant",
    );
  }
  // Token exchange and JWT bearer hand out a person's tokens for the deployment's APIs without that person here: as
  // client_credentials, an admin allows them (docs/oauth2.md §10.4); a registration may keep, never add, them.
  const delegation = grantTypes.filter(
    (grant) =>
      (DELEGATION_GRANTS as readonly string[]).includes(grant) &&
      !options.adminAllowedGrants?.includes(grant),
  );
  if (delegation.length > 0) {
    throw invalidMetadata(
      `${delegation.join(", ").slice(0, 200)} is for clients an administrator creates or allows`,
    );
  }
  const method = metadata.token_endpoint_auth_method ?? "client_secret_basic";
  if (!(AUTH_METHODS as readonly string[]).includes(method)) {
    throw invalidMetadata(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(", ")}`);
  }
  if (method === "none" && grantTypes.includes("client_credentials")) {
    throw invalidMetadata(
      "client_credentials needs a confidential client (a secret), not token_endpoint_auth_method none",
    );
  }
  const responseTypes =
    metadata.response_types ?? (grantTypes.includes("authorization_code") ? ["code"] : []);
  if (responseTypes.some((type) => type !== "code"))
    throw invalidMetadata("response_types may only hold code");
  if (grantTypes.includes("authorization_code") !== responseTypes.includes("code")) {
    throw invalidMetadata(
      "response_types code goes with the authorization_code grant type, and only with it",
    );
  }
  if (grantTypes.includes("authorization_code") && redirectUris.length === 0) {
    throw invalidRedirect("redirect_uris are required for the authorization_code grant type");
  }
  for (const uri of redirectUris) checkRedirectUri(uri, applicationType);
  const postLogoutRedirectUris = [...new Set(metadata.post_logout_redirect_uris ?? [])];
  for (const uri of postLogoutRedirectUris) checkRedirectUri(uri, applicationType);
  if (method === "private_key_jwt" && !metadata.jwks === !metadata.jwks_uri) {
    throw invalidMetadata("private_key_jwt needs the client's public keys: jwks or jwks_uri, one of the two");
  }
  // RFC 7591 §2: the server may grant fewer scopes than asked; it says which in its answer.
  const asked = metadata.scope?.split(" ").filter(Boolean);
  const scopes = asked
    ? asked.filter((scope) => (SUPPORTED_SCOPES as readonly string[]).includes(scope))
    : DEFAULT_SCOPES;
  return {
    clientName: metadata.client_name ?? "Unnamed client",
    redirectUris,
    scopes: [...new Set(scopes)],
    grantTypes,
    tokenEndpointAuthMethod: method as OAuth2ClientRow["tokenEndpointAuthMethod"],
    applicationType,
    clientUri: checkPageUri("client_uri", metadata.client_uri, deps),
    logoUri: checkPageUri("logo_uri", metadata.logo_uri, deps),
    contacts: metadata.contacts ?? null,
    softwareId: metadata.software_id ?? null,
    softwareVersion: metadata.software_version ?? null,
    dpopBoundAccessTokens: metadata.dpop_bound_access_tokens ?? false,
    requirePushedAuthorizationRequests: metadata.require_pushed_authorization_requests ?? false,
    postLogoutRedirectUris,
    backchannelLogoutUri: outboundMetadataUri(
      deps,
      "backchannel_logout_uri",
      metadata.backchannel_logout_uri,
    ),
    backchannelLogoutSessionRequired: metadata.backchannel_logout_session_required ?? false,
    jwks: metadata.jwks ?? null,
    jwksUri: outboundMetadataUri(deps, "jwks_uri", metadata.jwks_uri),
  };
}

/** A URL the service will call for the client (its logout endpoint, its keys), under the outbound-URL policy. */
function outboundMetadataUri(deps: Deps, name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  const verdict = checkOutboundUrl(value, outboundPolicy(deps.config));
  if (!verdict.ok) throw invalidMetadata(`${name}: ${verdict.reason}`);
  return value;
}

/** The client's metadata as RFC 7591 §3.2.1 answers it. */
export function metadataOf(deps: Deps, row: OAuth2ClientRow) {
  return {
    client_id: row.clientId,
    client_id_issued_at: Math.floor(row.createdAt / 1000),
    client_name: row.clientName,
    redirect_uris: row.redirectUris,
    application_type: row.applicationType,
    token_endpoint_auth_method: row.tokenEndpointAuthMethod,
    grant_types: row.grantTypes,
    response_types: row.grantTypes.includes("authorization_code") ? ["code"] : [],
    scope: row.scopes.join(" "),
    ...(row.clientUri ? { client_uri: row.clientUri } : {}),
    ...(row.logoUri ? { logo_uri: row.logoUri } : {}),
    ...(row.contacts ? { contacts: row.contacts } : {}),
    ...(row.softwareId ? { software_id: row.softwareId } : {}),
    ...(row.softwareVersion ? { software_version: row.softwareVersion } : {}),
    dpop_bound_access_tokens: row.dpopBoundAccessTokens,
    require_pushed_authorization_requests: row.requirePushedAuthorizationRequests,
    ...(row.postLogoutRedirectUris.length > 0
      ? { post_logout_redirect_uris: row.postLogoutRedirectUris }
      : {}),
    ...(row.backchannelLogoutUri
      ? {
          backchannel_logout_uri: row.backchannelLogoutUri,
          backchannel_logout_session_required: row.backchannelLogoutSessionRequired,
        }
      : {}),
    ...(row.jwks ? { jwks: row.jwks } : {}),
    ...(row.jwksUri ? { jwks_uri: row.jwksUri } : {}),
    registration_client_uri: deps.config.urls.auth(`/oauth2/register/${encodeURIComponent(row.clientId)}`),
  };
}

const newRegistrationToken = () =>
  `${REGISTRATION_TOKEN_PREFIX}${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`;

/** `POST /oauth2/register`: a new client, its secret (confidential clients) and registration token, shown once. */
export async function registerClient(
  deps: Deps,
  body: unknown,
  registeredBy: { mode: "open" } | { mode: "authenticated"; userId: string },
) {
  const registrationToken = newRegistrationToken();
  const { row, secret } = await insertClient(deps, {
    ...registeredSettings(deps, body),
    accessTokenLifetime: deps.config.oauth2.accessTokenTtl,
    refreshTokenLifetime: deps.config.oauth2.refreshTokenTtl,
    registration: registeredBy.mode,
    registeredByUserId: registeredBy.mode === "authenticated" ? registeredBy.userId : null,
    registrationTokenHash: await sha256Hex(registrationToken),
  });
  return {
    ...metadataOf(deps, row),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    registration_access_token: registrationToken,
  };
}

/**
 * The client a registration access token manages (RFC 7592 §2): the bearer token's hash must be the client's, compared
 * in constant time; anything else is 401 `invalid_token`, whether the client exists or not (a probe learns nothing).
 */
export async function managedClient(
  deps: Deps,
  clientId: string,
  bearer: string | undefined,
): Promise<OAuth2ClientRow> {
  const invalid = new OAuth2Error(
    "invalid_token",
    "the registration access token is invalid for this client",
  );
  if (!bearer || bearer.length > 200 || clientId.length > 200) throw invalid;
  const row = await deps.db.select().from(oauth2Clients).where(eq(oauth2Clients.clientId, clientId)).get();
  const presented = await sha256Hex(bearer);
  if (!row?.registrationTokenHash || !timingSafeEqualString(presented, row.registrationTokenHash))
    throw invalid;
  return row;
}

/**
 * RFC 7592 §2.2: the full metadata replaces the client's; the client id in the body must be the client's. The answer
 * carries a new registration access token and the old one stops working with this update (§2.2 allows it): a token
 * that leaked through a log or a shared configuration dies at the client's next update instead of never. The update
 * is conditional on the old token's hash, so of two updates made with one token only the first gets a new one.
 */
export async function replaceRegistration(deps: Deps, client: OAuth2ClientRow, body: unknown) {
  const claimed = (body as { client_id?: unknown } | null)?.client_id;
  if (claimed !== client.clientId) throw invalidMetadata("client_id must be the client's own");
  const settings = registeredSettings(deps, body, {
    adminAllowedClientCredentials: client.grantTypes.includes(MACHINE_GRANT),
    adminAllowedGrants: client.grantTypes,
  });
  if (hasSecret(settings.tokenEndpointAuthMethod) !== hasSecret(client.tokenEndpointAuthMethod)) {
    throw invalidMetadata("a client cannot switch between public and confidential: register a new one");
  }
  const registrationToken = newRegistrationToken();
  const row = await deps.db
    .update(oauth2Clients)
    .set({ ...settings, registrationTokenHash: await sha256Hex(registrationToken), updatedAt: deps.now() })
    .where(
      and(
        eq(oauth2Clients.clientId, client.clientId),
        eq(oauth2Clients.registrationTokenHash, client.registrationTokenHash!),
      ),
    )
    .returning()
    .get();
  forgetOAuth2Client(client.clientId);
  if (!row)
    throw new OAuth2Error("invalid_token", "the registration access token is invalid for this client");
  return { ...metadataOf(deps, row), registration_access_token: registrationToken };
}

/**
 * RFC 7592 §2.3: the client goes, with its grants, codes and consents (first, from every user's shard:
 * src/db/client-rows.ts); its tokens stop working.
 */
export async function deleteRegistration(deps: Deps, client: OAuth2ClientRow): Promise<void> {
  await removeClientRows(deps.shards, [client.clientId]);
  await deps.db.delete(oauth2Clients).where(eq(oauth2Clients.clientId, client.clientId));
  forgetOAuth2Client(client.clientId);
}
