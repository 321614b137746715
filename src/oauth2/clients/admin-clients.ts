import { asc, eq } from "drizzle-orm";
import { base64url } from "jose";
import { z } from "zod";
import { removeClientRows } from "../../db/client-rows";
import { type OAuth2ClientRow, oauth2Clients } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { type Page, pastCursor, toPage } from "../../http/paging";
import { sha256Hex } from "../../lib/crypto";
import { checkOutboundUrl, outboundPolicy } from "../../lib/outbound-url";
import { isProviderName } from "../../providers";
import { CLIENT_ID_PREFIX, CLIENT_SECRET_PREFIX } from "../token-prefixes";
import { forgetOAuth2Client } from "./client-cache";
import { AUTH_METHODS, type ClientBody, DEFAULT_GRANT_TYPES, DEFAULT_SCOPES } from "./client-schema";

/** The client resource of the admin API (contract §10); the secret appears only when it is made. */
export const wireClientSchema = z.object({
  clientId: z.string(),
  clientSecret: z.string().optional().describe("Only in the answer that made it"),
  clientName: z.string(),
  redirectUris: z.array(z.string()),
  scopes: z.array(z.string()),
  grantTypes: z.array(z.string()),
  tokenEndpointAuthMethod: z.enum(AUTH_METHODS),
  accessTokenLifetime: z.number().int(),
  refreshTokenLifetime: z.number().int(),
  applicationType: z.enum(["web", "native"]),
  resources: z.array(z.string()).nullable().describe("RFC 8707 resources its tokens may be for; null: all"),
  logoUri: z
    .string()
    .nullable()
    .describe("The logo its consent screen shows; only for clients an admin made (registration `admin`)"),
  dpopBoundAccessTokens: z.boolean().describe("RFC 9449: every token request must carry a DPoP proof"),
  requirePushedAuthorizationRequests: z
    .boolean()
    .describe("RFC 9126: authorization requests only through PAR"),
  postLogoutRedirectUris: z.array(z.string()).describe("Where RP-initiated logout may send the browser"),
  backchannelLogoutUri: z.string().nullable().describe("Where back-channel logout tokens are posted"),
  backchannelLogoutSessionRequired: z.boolean(),
  backchannelTokenDeliveryMode: z
    .enum(["poll", "ping"])
    .nullable()
    .describe("OpenID CIBA: how the client gets a backchannel authentication's outcome; null: no CIBA"),
  backchannelClientNotificationEndpoint: z
    .string()
    .nullable()
    .describe("CIBA ping mode: where pings are posted"),
  backchannelOrganization: z
    .string()
    .nullable()
    .describe("CIBA: the organization whose active members alone the client may ask"),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).nullable(),
  jwksUri: z.string().nullable(),
  trustedIssuers: z
    .array(
      z.object({
        issuer: z.string(),
        jwksUri: z.string().optional(),
        jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
        users: z.array(z.string()).optional().describe("Only these users may be named by its assertions"),
        orgs: z
          .array(z.string())
          .optional()
          .describe("Only active members of one of these organizations may be named by its assertions"),
      }),
    )
    .describe("Issuers whose assertions the client may exchange (JWT bearer, ID-JAG)"),
  vaultProviders: z
    .array(z.string())
    .describe("The token vault: providers whose tokens it may get by token exchange for a user who let it"),
  authorizationDetailsTypes: z
    .array(
      z.object({
        type: z.string(),
        schema: z.record(z.string(), z.unknown()).describe("JSON Schema 2020-12 of the type's fields"),
        template: z
          .union([z.string(), z.record(z.string(), z.string())])
          .describe("What the consent page shows: text with {{ field }} placeholders, or one per language"),
      }),
    )
    .describe("RFC 9396 authorization details types the client may ask for"),
  fedcmOrigins: z
    .array(z.string())
    .describe(
      "FedCM: relying-party origins whose pages may ask the browser's sign-in prompt for this client",
    ),
  policyUri: z.string().nullable().describe("Its privacy policy, linked by the FedCM prompt"),
  tosUri: z.string().nullable().describe("Its terms of service, linked by the FedCM prompt"),
  registration: z
    .enum(["admin", "open", "authenticated", "metadata-document"])
    .describe("How it came to be: the admin API, dynamic registration, or a client ID metadata document"),
  registeredByUserId: z.string().nullable(),
  lastUsedAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type WireClient = z.infer<typeof wireClientSchema>;

function toWireClient(row: OAuth2ClientRow, clientSecret?: string): WireClient {
  return {
    clientId: row.clientId,
    ...(clientSecret ? { clientSecret } : {}),
    clientName: row.clientName,
    redirectUris: row.redirectUris,
    scopes: row.scopes,
    grantTypes: row.grantTypes,
    tokenEndpointAuthMethod: row.tokenEndpointAuthMethod,
    accessTokenLifetime: row.accessTokenLifetime,
    refreshTokenLifetime: row.refreshTokenLifetime,
    applicationType: row.applicationType,
    resources: row.resources,
    logoUri: row.logoUri,
    dpopBoundAccessTokens: row.dpopBoundAccessTokens,
    requirePushedAuthorizationRequests: row.requirePushedAuthorizationRequests,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    backchannelLogoutUri: row.backchannelLogoutUri,
    backchannelLogoutSessionRequired: row.backchannelLogoutSessionRequired,
    backchannelTokenDeliveryMode: row.backchannelTokenDeliveryMode,
    backchannelClientNotificationEndpoint: row.backchannelClientNotificationEndpoint,
    backchannelOrganization: row.backchannelOrganization,
    jwks: row.jwks,
    jwksUri: row.jwksUri,
    trustedIssuers: row.trustedIssuers,
    vaultProviders: row.vaultProviders,
    authorizationDetailsTypes: row.authorizationDetailsTypes,
    fedcmOrigins: row.fedcmOrigins,
    policyUri: row.policyUri,
    tosUri: row.tosUri,
    registration: row.registration,
    registeredByUserId: row.registeredByUserId,
    lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt).toISOString(),
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

/** Public clients have no secret, and neither do `private_key_jwt` ones: they prove themselves with their key. */
export const hasSecret = (method: OAuth2ClientRow["tokenEndpointAuthMethod"]) =>
  method !== "none" && method !== "private_key_jwt";

const randomText = (bytes: number) => base64url.encode(crypto.getRandomValues(new Uint8Array(bytes)));

/** 128 random bits with a prefix that says what it is in logs and configuration. */
export const newClientId = () => `${CLIENT_ID_PREFIX}${randomText(16)}`;
/** 256 random bits; stored as SHA-256 only. */
export const newSecret = () => `${CLIENT_SECRET_PREFIX}${randomText(32)}`;

const notFound = () => new AppError("not-found", "no OAuth2 client with this id");

/**
 * The settings a body describes, with the defaults of contract §10 and the configuration applied. An admin says
 * `native` when they mean it (a new client is `web`); a replaced client keeps its type unless the body names one.
 */
function settings(deps: Deps, body: ClientBody, current?: OAuth2ClientRow) {
  const { config } = deps;
  const outside = body.resources?.filter((resource) => !config.oauth2.resources.includes(resource)) ?? [];
  if (outside.length > 0) {
    throw new AppError(
      "invalid-request",
      `resources: not among AUTH_OAUTH2_PROVIDER_RESOURCES: ${outside.join(" ").slice(0, 300)}`,
    );
  }
  return {
    clientName: body.clientName,
    redirectUris: [...new Set(body.redirectUris)],
    applicationType: body.applicationType ?? current?.applicationType ?? "web",
    resources: body.resources ? [...new Set(body.resources)] : null,
    logoUri: body.logoUri ?? null,
    scopes: [...new Set(body.scopes ?? DEFAULT_SCOPES)],
    grantTypes: [...new Set(body.grantTypes ?? DEFAULT_GRANT_TYPES)],
    tokenEndpointAuthMethod: body.tokenEndpointAuthMethod ?? "client_secret_basic",
    accessTokenLifetime: body.accessTokenLifetime ?? config.oauth2.accessTokenTtl,
    refreshTokenLifetime: body.refreshTokenLifetime ?? config.oauth2.refreshTokenTtl,
    dpopBoundAccessTokens: body.dpopBoundAccessTokens ?? false,
    requirePushedAuthorizationRequests: body.requirePushedAuthorizationRequests ?? false,
    postLogoutRedirectUris: [...new Set(body.postLogoutRedirectUris ?? [])],
    backchannelLogoutUri: outboundUri(deps, "backchannelLogoutUri", body.backchannelLogoutUri),
    backchannelLogoutSessionRequired: body.backchannelLogoutSessionRequired ?? false,
    backchannelTokenDeliveryMode: body.backchannelTokenDeliveryMode ?? null,
    backchannelClientNotificationEndpoint: outboundUri(
      deps,
      "backchannelClientNotificationEndpoint",
      body.backchannelClientNotificationEndpoint,
    ),
    backchannelOrganization: body.backchannelOrganization ?? null,
    jwks: body.jwks ?? null,
    jwksUri: outboundUri(deps, "jwksUri", body.jwksUri),
    trustedIssuers: (body.trustedIssuers ?? []).map((trusted) => ({
      ...trusted,
      ...(trusted.jwksUri ? { jwksUri: outboundUri(deps, "trustedIssuers.jwksUri", trusted.jwksUri)! } : {}),
    })),
    vaultProviders: vaultProvidersOf(body.vaultProviders),
    authorizationDetailsTypes: body.authorizationDetailsTypes ?? [],
    fedcmOrigins: [...new Set(body.fedcmOrigins ?? [])],
    policyUri: body.policyUri ?? null,
    tosUri: body.tosUri ?? null,
  };
}

/** Providers the service knows (src/providers/registry.ts); one switched off later is simply never released. */
function vaultProvidersOf(names: string[] | undefined): string[] {
  const unknown = (names ?? []).filter((name) => !isProviderName(name));
  if (unknown.length > 0) {
    throw new AppError(
      "invalid-request",
      `vaultProviders: unknown providers: ${unknown.join(" ").slice(0, 200)}`,
    );
  }
  return [...new Set(names ?? [])];
}

/**
 * A URL the service will call (back-channel logout, a client's keys): checked against the outbound-URL policy now,
 * and again at every call (the policy may change, and DNS with it).
 */
function outboundUri(deps: Deps, name: string, value: string | null | undefined): string | null {
  if (!value) return null;
  const verdict = checkOutboundUrl(value, outboundPolicy(deps.config));
  if (!verdict.ok) throw new AppError("invalid-request", `${name}: ${verdict.reason}`);
  return value;
}

type NewClientValues = Omit<
  typeof oauth2Clients.$inferInsert,
  "clientId" | "secretHash" | "createdAt" | "updatedAt"
>;

/**
 * A new client row with a fresh id; a confidential client also gets a fresh secret, returned here once and stored as
 * SHA-256 only. Admin-created and registered clients are both made here.
 */
export async function insertClient(
  deps: Deps,
  values: NewClientValues,
): Promise<{ row: OAuth2ClientRow; secret?: string }> {
  const secret = hasSecret(values.tokenEndpointAuthMethod) ? newSecret() : undefined;
  const now = deps.now();
  const row = await deps.db
    .insert(oauth2Clients)
    .values({
      ...values,
      clientId: newClientId(),
      secretHash: secret ? await sha256Hex(secret) : null,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
  return { row: row!, secret };
}

/** A confidential client gets a secret, shown in this answer only; a public one (`none`) gets none. */
export async function createClient(deps: Deps, body: ClientBody): Promise<WireClient> {
  const { row, secret } = await insertClient(deps, settings(deps, body));
  // Nothing cached of a new client but discovery's union of authorization details types.
  forgetOAuth2Client(row.clientId);
  return toWireClient(row, secret);
}

async function findClient(deps: Deps, clientId: string): Promise<OAuth2ClientRow> {
  const row = await deps.db.select().from(oauth2Clients).where(eq(oauth2Clients.clientId, clientId)).get();
  if (!row) throw notFound();
  return row;
}

export async function getClient(deps: Deps, clientId: string): Promise<WireClient> {
  return toWireClient(await findClient(deps, clientId));
}

/**
 * `PUT`: the same body as create replaces every setting. A client that becomes confidential gets a secret (in this
 * answer); one that becomes public loses its secret.
 */
export async function replaceClient(deps: Deps, clientId: string, body: ClientBody): Promise<WireClient> {
  const current = await findClient(deps, clientId);
  const values = settings(deps, body, current);
  const isPublic = !hasSecret(values.tokenEndpointAuthMethod);
  const secret = !isPublic && !current.secretHash ? newSecret() : undefined;
  const row = await deps.db
    .update(oauth2Clients)
    .set({
      ...values,
      ...(isPublic ? { secretHash: null } : secret ? { secretHash: await sha256Hex(secret) } : {}),
      updatedAt: deps.now(),
    })
    .where(eq(oauth2Clients.clientId, clientId))
    .returning()
    .get();
  if (!row) throw notFound();
  forgetOAuth2Client(clientId);
  return toWireClient(row, secret);
}

/**
 * The token vault's providers of a client (operators.md §3), alone: the console's vault screen sets them without the
 * rest of the client's settings.
 */
export async function setClientVaultProviders(
  deps: Deps,
  clientId: string,
  providers: string[],
): Promise<WireClient> {
  const row = await deps.db
    .update(oauth2Clients)
    .set({ vaultProviders: vaultProvidersOf(providers), updatedAt: deps.now() })
    .where(eq(oauth2Clients.clientId, clientId))
    .returning()
    .get();
  if (!row) throw notFound();
  forgetOAuth2Client(clientId);
  return toWireClient(row);
}

/**
 * The client's grants, codes and consents go first, from every user's shard (src/db/client-rows.ts), then its row: a
 * deletion that fails half-way leaves the client in place, and trying again finishes it.
 */
export async function deleteClient(deps: Deps, clientId: string): Promise<void> {
  await findClient(deps, clientId);
  await removeClientRows(deps.shards, [clientId]);
  const row = await deps.db
    .delete(oauth2Clients)
    .where(eq(oauth2Clients.clientId, clientId))
    .returning({ clientId: oauth2Clients.clientId })
    .get();
  if (!row) throw notFound();
  forgetOAuth2Client(clientId);
}

/**
 * A new secret; the old one stops working at once in this isolate (one UPDATE replaces its hash), within the client
 * cache's ten seconds elsewhere (client-auth.ts). Public clients have none.
 */
export async function rotateClientSecret(deps: Deps, clientId: string): Promise<{ clientSecret: string }> {
  const current = await findClient(deps, clientId);
  if (!hasSecret(current.tokenEndpointAuthMethod)) {
    throw new AppError(
      "invalid-request",
      "a public client (tokenEndpointAuthMethod none) or a private_key_jwt one has no secret",
    );
  }
  const clientSecret = newSecret();
  await deps.db
    .update(oauth2Clients)
    .set({ secretHash: await sha256Hex(clientSecret), updatedAt: deps.now() })
    .where(eq(oauth2Clients.clientId, clientId));
  forgetOAuth2Client(clientId);
  return { clientSecret };
}

/** Clients in creation order, `limit` at a time (contract §10: `{items, nextCursor}`). */
export async function listClients(
  deps: Deps,
  page: { limit: number; cursor?: string },
): Promise<Page<WireClient>> {
  const rows = await deps.db
    .select()
    .from(oauth2Clients)
    .where(pastCursor(page.cursor, oauth2Clients.createdAt, oauth2Clients.clientId, "asc"))
    .orderBy(asc(oauth2Clients.createdAt), asc(oauth2Clients.clientId))
    .limit(page.limit + 1)
    .all();
  return toPage(
    rows,
    page.limit,
    (row) => [row.createdAt, row.clientId],
    (row) => toWireClient(row),
  );
}
