import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { orgRoles } from "../auth";
import { type SsoConnectionRow, ssoConnections } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { encrypt, randomUuid } from "../lib/crypto";
import { checkOutboundUrl, outboundPolicy } from "../lib/outbound-url";
import { normalDomain } from "./domains";
import { samlSettingsFromMetadata } from "./saml";

/**
 * An organization's enterprise connections (contract organizations.md §2): OIDC or SAML, with the role a new member
 * gets (or a group → role mapping). An OIDC client secret is sealed (AES-256-GCM under AUTH_ENCRYPTION_KEY) and never
 * answered; SAML settings come from the IdP's metadata (src/sso/saml/).
 */

const MAX_CONNECTIONS_PER_ORG = 20;

const roleMapping = z
  .record(z.string().min(1).max(200), z.string().min(1).max(100))
  .refine((mapping) => Object.keys(mapping).length <= 100, "at most 100 entries");

const common = {
  defaultRole: z.string().min(1).max(100).optional(),
  roleMapping: roleMapping.optional(),
  enabled: z.boolean().optional(),
};

const oidcFields = {
  issuer: z.url().max(2048),
  clientId: z.string().min(1).max(512),
  clientSecret: z.string().min(1).max(2048),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "a scope token"))
    .max(20)
    .optional(),
};

const samlFields = {
  metadataXml: z.string().min(1).max(60_000).optional(),
  metadataUrl: z.url().max(2048).optional(),
  allowIdpInitiated: z.boolean().optional(),
};

export const newConnectionSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("oidc"), ...oidcFields, ...common }),
  z.strictObject({ type: z.literal("saml"), ...samlFields, ...common }),
]);

/** The domains a connection serves (null: every verified domain of its org): how an owner widens a link's connection. */
const servedDomains = z.array(z.string().min(1).max(253)).max(500).nullable();

export const connectionPatchSchema = z.strictObject({
  ...common,
  domains: servedDomains.optional(),
  issuer: oidcFields.issuer.optional(),
  clientId: oidcFields.clientId.optional(),
  clientSecret: oidcFields.clientSecret.optional(),
  scopes: oidcFields.scopes,
  ...samlFields,
});

export type NewConnection = z.infer<typeof newConnectionSchema>;
export type ConnectionPatch = z.infer<typeof connectionPatchSchema>;

/** OIDC settings as stored. */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecretSealed: string;
  scopes: string[];
}

export const DEFAULT_OIDC_SCOPES = ["openid", "email", "profile"];

export const connectionSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  type: z.enum(["oidc", "saml"]),
  enabled: z.boolean(),
  defaultRole: z.string(),
  roleMapping: z.record(z.string(), z.string()),
  allowIdpInitiated: z.boolean(),
  domains: z
    .array(z.string())
    .nullable()
    .describe(
      "The verified domains it serves; null: all of the org's (a setup link's connection: the link's)",
    ),
  setupLinkId: z.string().nullable().describe("The setup link that made it (contract operators.md §5)"),
  testedAt: z.string().nullable().describe("When its last test round trip succeeded"),
  lastTest: z
    .object({
      at: z.string(),
      ok: z.boolean(),
      email: z.string().optional(),
      error: z.string().optional(),
    })
    .nullable()
    .describe("The last test round trip's outcome"),
  oidc: z
    .object({
      issuer: z.string(),
      clientId: z.string(),
      scopes: z.array(z.string()),
      redirectUri: z.string().describe("Register this at the IdP"),
    })
    .optional()
    .describe("OIDC: the client secret is never answered"),
  saml: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("SAML: the IdP's settings read from its metadata, and this service's metadata and ACS URLs"),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type WireConnection = z.infer<typeof connectionSchema>;

/**
 * Where an IdP sends the browser back after an OIDC sign-in: one URL per connection, so an answer can only be taken
 * for the connection it was sent to (the mix-up defense of RFC 9700 §4.4.2, distinct redirect URIs).
 */
export const oidcCallbackUrl = (deps: Pick<Deps, "config">, connectionId: string) =>
  deps.config.urls.auth(`/sso/oidc/${connectionId}/callback`);

/** What a test round trip recorded (./test-round-trip.ts), as answered. */
function wireTest(stored: Record<string, unknown> | null): WireConnection["lastTest"] {
  if (!stored) return null;
  return {
    at: new Date(Number(stored.at)).toISOString(),
    ok: stored.ok === true,
    ...(typeof stored.email === "string" ? { email: stored.email } : {}),
    ...(typeof stored.error === "string" ? { error: stored.error } : {}),
  };
}

export function toWireConnection(deps: Pick<Deps, "config">, row: SsoConnectionRow): WireConnection {
  const settings = row.settings as Record<string, unknown>;
  const base = {
    id: row.id,
    orgId: row.orgId,
    type: row.type as "oidc" | "saml",
    enabled: row.enabled,
    defaultRole: row.defaultRole,
    roleMapping: row.roleMapping,
    allowIdpInitiated: row.allowIdpInitiated,
    domains: row.domains ?? null,
    setupLinkId: row.setupLinkId ?? null,
    testedAt: row.testedAt === null ? null : new Date(row.testedAt).toISOString(),
    lastTest: wireTest(row.lastTest),
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
  if (row.type === "oidc") {
    const oidc = settings as unknown as OidcSettings;
    return {
      ...base,
      oidc: {
        issuer: oidc.issuer,
        clientId: oidc.clientId,
        scopes: oidc.scopes,
        redirectUri: oidcCallbackUrl(deps, row.id),
      },
    };
  }
  const server = deps.config.urls.server;
  return {
    ...base,
    saml: {
      ...settings,
      spMetadataUrl: `${server}/sso/saml/${row.id}/metadata`,
      acsUrl: `${server}/sso/saml/${row.id}/acs`,
    },
  };
}

function checkRoles(
  deps: Pick<Deps, "config">,
  input: { defaultRole?: string; roleMapping?: Record<string, string> },
) {
  const roles = orgRoles(deps.config);
  for (const role of [input.defaultRole, ...Object.values(input.roleMapping ?? {})]) {
    if (role !== undefined && !roles.includes(role)) {
      throw new AppError("invalid-request", `role ${role}: must be one of ${roles.join(", ")}`);
    }
  }
}

/** The issuer is fetched on the owner's say-so (discovery): the outbound-URL policy applies (auth.md §1). */
function checkIssuer(deps: Pick<Deps, "config">, issuer: string) {
  const verdict = checkOutboundUrl(
    `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`,
    outboundPolicy(deps.config),
  );
  if (!verdict.ok) throw new AppError("invalid-request", `issuer: ${verdict.reason}`);
}

async function oidcSettings(
  deps: Deps,
  input: z.infer<typeof newConnectionSchema> & { type: "oidc" },
): Promise<OidcSettings> {
  checkIssuer(deps, input.issuer);
  return {
    issuer: input.issuer,
    clientId: input.clientId,
    clientSecretSealed: await encrypt(deps.config.secrets.encryptionKey, input.clientSecret),
    scopes: input.scopes?.length ? [...new Set(["openid", ...input.scopes])] : DEFAULT_OIDC_SCOPES,
  };
}

async function samlSettings(deps: Deps, input: { metadataXml?: string; metadataUrl?: string }) {
  if (!input.metadataXml === !input.metadataUrl) {
    throw new AppError("invalid-request", "saml: give exactly one of metadataXml and metadataUrl");
  }
  return (await samlSettingsFromMetadata(deps, input)) as unknown as Record<string, unknown>;
}

/**
 * Made through a setup link (contract operators.md §5): disabled until its test round trip succeeded and an owner
 * enabled it, serving only `domains` (the link's verified ones) until an owner widens it.
 */
export interface SetupLinkOrigin {
  setupLinkId: string;
  domains: string[];
  /** The id chosen before it exists: the values its IdP needs (ACS URL, redirect URI) carry it. */
  connectionId: string;
}

export async function createConnection(
  deps: Deps,
  orgId: string,
  input: NewConnection,
  origin?: SetupLinkOrigin,
): Promise<SsoConnectionRow> {
  checkRoles(deps, input);
  const existing = await deps.db.$count(ssoConnections, eq(ssoConnections.orgId, orgId));
  if (existing >= MAX_CONNECTIONS_PER_ORG) {
    throw new AppError(
      "invalid-request",
      `an organization has at most ${MAX_CONNECTIONS_PER_ORG} connections`,
    );
  }
  const settings = input.type === "oidc" ? await oidcSettings(deps, input) : await samlSettings(deps, input);
  const now = deps.now();
  return deps.db
    .insert(ssoConnections)
    .values({
      id: origin?.connectionId ?? randomUuid(),
      orgId,
      type: input.type,
      settings: settings as unknown as Record<string, unknown>,
      defaultRole: input.defaultRole ?? "member",
      roleMapping: input.roleMapping ?? {},
      allowIdpInitiated: input.type === "saml" ? (input.allowIdpInitiated ?? false) : false,
      enabled: origin ? false : (input.enabled ?? true),
      setupLinkId: origin?.setupLinkId ?? null,
      domains: origin ? origin.domains : null,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

export async function listConnections(deps: Pick<Deps, "db">, orgId: string): Promise<SsoConnectionRow[]> {
  return deps.db
    .select()
    .from(ssoConnections)
    .where(eq(ssoConnections.orgId, orgId))
    .orderBy(asc(ssoConnections.createdAt), asc(ssoConnections.id))
    .all();
}

/** The org's connection `id`; another org's id is `not-found`, as if it did not exist. */
export async function getConnection(
  deps: Pick<Deps, "db">,
  orgId: string,
  id: string,
): Promise<SsoConnectionRow> {
  const row = await deps.db
    .select()
    .from(ssoConnections)
    .where(and(eq(ssoConnections.orgId, orgId), eq(ssoConnections.id, id)))
    .get();
  if (!row) throw new AppError("not-found", "no such connection");
  return row;
}

export async function findConnection(
  deps: Pick<Deps, "db">,
  id: string,
): Promise<SsoConnectionRow | undefined> {
  return deps.db.select().from(ssoConnections).where(eq(ssoConnections.id, id)).get();
}

export async function updateConnection(
  deps: Deps,
  orgId: string,
  id: string,
  patch: ConnectionPatch,
): Promise<SsoConnectionRow> {
  const row = await getConnection(deps, orgId, id);
  checkRoles(deps, patch);
  // A setup link's connection is enabled by an owner only once a test round trip went through (operators.md §5).
  if (patch.enabled === true && row.setupLinkId && row.testedAt === null) {
    throw new AppError("sso-connection-untested");
  }
  const domains =
    patch.domains === undefined ? undefined : patch.domains && [...new Set(patch.domains.map(normalDomain))];
  let settings = row.settings;
  if (row.type === "oidc") {
    if (patch.metadataUrl || patch.metadataXml || patch.allowIdpInitiated !== undefined) {
      throw new AppError("invalid-request", "an OIDC connection has no SAML settings");
    }
    const current = row.settings as unknown as OidcSettings;
    if (patch.issuer) checkIssuer(deps, patch.issuer);
    settings = {
      ...current,
      ...(patch.issuer ? { issuer: patch.issuer } : {}),
      ...(patch.clientId ? { clientId: patch.clientId } : {}),
      ...(patch.clientSecret
        ? { clientSecretSealed: await encrypt(deps.config.secrets.encryptionKey, patch.clientSecret) }
        : {}),
      ...(patch.scopes ? { scopes: [...new Set(["openid", ...patch.scopes])] } : {}),
    } as unknown as Record<string, unknown>;
  } else {
    if (patch.issuer || patch.clientId || patch.clientSecret || patch.scopes) {
      throw new AppError("invalid-request", "a SAML connection has no OIDC settings");
    }
    if (patch.metadataUrl || patch.metadataXml) settings = await samlSettings(deps, patch);
  }
  const updated = await deps.db
    .update(ssoConnections)
    .set({
      settings,
      ...(patch.defaultRole !== undefined ? { defaultRole: patch.defaultRole } : {}),
      ...(patch.roleMapping !== undefined ? { roleMapping: patch.roleMapping } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      ...(domains !== undefined ? { domains } : {}),
      ...(patch.allowIdpInitiated !== undefined ? { allowIdpInitiated: patch.allowIdpInitiated } : {}),
      updatedAt: deps.now(),
    })
    .where(and(eq(ssoConnections.orgId, orgId), eq(ssoConnections.id, id)))
    .returning()
    .get();
  if (!updated) throw new AppError("not-found", "no such connection");
  return updated;
}

export async function deleteConnection(deps: Pick<Deps, "db">, orgId: string, id: string): Promise<void> {
  const gone = await deps.db
    .delete(ssoConnections)
    .where(and(eq(ssoConnections.orgId, orgId), eq(ssoConnections.id, id)))
    .returning({ id: ssoConnections.id })
    .get();
  if (!gone) throw new AppError("not-found", "no such connection");
}
