import { and, eq, inArray, isNotNull, ne } from "drizzle-orm";
import { z } from "zod";
import { type ImportLedgerRow, importLedger, orgDomains } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { createOrg, findOrg } from "../orgs";
import {
  addDomain,
  createConnection,
  EMAIL_ATTRIBUTES,
  listConnections,
  listDomains,
  normalDomain,
  samlSettingsFromMetadata,
  updateConnection,
  verifyDomain,
} from "../sso";

/**
 * Enterprise SSO moved in (`POST /admin/import/nhost/orgs`, contract supabase.md §5): one of Supabase's SSO providers
 * (its SAML provider and SSO domains) becomes an organization under the provider's id, with a SAML connection made
 * from the IdP's metadata and the domains verified (Supabase verified nothing by DNS either: its operator declared
 * them, as this admin import does). The orgs and sso cores make every row (createOrg, createConnection, addDomain,
 * verifyDomain(…, "admin")): the import only decides what is missing. The users GoTrue made through the provider are
 * users of the users import; the connection finds them by their address inside the org's verified domains.
 */

const MAX_DOMAINS = 100;

export const orgRowSchema = z.object({
  /** Supabase's `sso_providers.id`: the org's id here, so a later run (and the SSO users) name the same org. */
  id: z.uuid(),
  name: z.string().min(1).max(200),
  domains: z.array(z.string().max(253)).max(MAX_DOMAINS),
  saml: z.object({
    metadataXml: z.string().min(1).max(60_000),
    /** GoTrue's `name_id_format`, `attribute_mapping`: what this service's connection can honour is said per row. */
    nameIdFormat: z.string().max(200).nullable().optional(),
    attributeMapping: z.record(z.string(), z.unknown()).nullable().optional(),
  }),
  enabled: z.boolean(),
});

export const importOrgsBody = z.object({
  dryRun: z.boolean().default(false),
  orgs: z.array(orgRowSchema).min(1).max(100),
});

export type OrgRow = z.infer<typeof orgRowSchema>;
type Warning = { table: string; id: string; reason: string; notCarried: boolean };
type Result = {
  id: string;
  outcome: "imported" | "updated" | "unchanged" | "kept" | "skipped";
  reasons?: { table: string; id: string; reason: string }[];
  warnings?: Warning[];
};

const EMAIL_NAME_ID = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";

/**
 * What of GoTrue's attribute mapping the connection can't honour: it reads the email (and name, groups) from the
 * usual attribute names (src/sso/saml/identity.ts) and keeps no custom claims. An email mapped from another
 * attribute would sign nobody in: not carried.
 */
function mappingWarnings(row: OrgRow): Warning[] {
  const warnings: Warning[] = [];
  const keys = (row.saml.attributeMapping?.keys ?? {}) as Record<string, { name?: unknown; names?: unknown }>;
  for (const [key, spec] of Object.entries(keys)) {
    const names = [spec?.name, ...(Array.isArray(spec?.names) ? spec.names : [])].filter(
      (n): n is string => typeof n === "string" && n.length > 0,
    );
    if (key === "email") {
      if (names.length > 0 && !names.some((n) => EMAIL_ATTRIBUTES.includes(n)))
        warnings.push({
          table: "auth.saml_providers",
          id: row.id,
          reason: `attribute mapping: email from "${names.join('", "')}", which this service does not read (it reads ${EMAIL_ATTRIBUTES.slice(0, 3).join(", ")} or an emailAddress NameID): have the IdP send one of those`,
          notCarried: true,
        });
    } else
      warnings.push({
        table: "auth.saml_providers",
        id: row.id,
        reason: `attribute mapping of "${key}": not carried (the service keeps no custom SAML claims)`,
        notCarried: false,
      });
  }
  if (row.saml.nameIdFormat && row.saml.nameIdFormat !== EMAIL_NAME_ID)
    warnings.push({
      table: "auth.saml_providers",
      id: row.id,
      reason: `name_id_format ${row.saml.nameIdFormat}: this service asks the IdP for an emailAddress NameID (or an email attribute)`,
      notCarried: false,
    });
  return warnings;
}

/** The row checked whole before anything is written: the domains, the metadata, no domain verified by another org. */
async function check(
  deps: Deps,
  row: OrgRow,
): Promise<{ domains: string[] } | { reasons: Result["reasons"] }> {
  const reasons: NonNullable<Result["reasons"]> = [];
  const domains: string[] = [];
  for (const raw of row.domains) {
    try {
      domains.push(normalDomain(raw));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      reasons.push({ table: "auth.sso_domains", id: raw, reason: error.message });
    }
  }
  try {
    await samlSettingsFromMetadata(deps, { metadataXml: row.saml.metadataXml });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    reasons.push({ table: "auth.saml_providers", id: row.id, reason: `metadata_xml: ${error.message}` });
  }
  // A domain another org here verified stays that org's: nothing of this provider is written (checked first, so
  // no org is left half made).
  const taken =
    domains.length === 0
      ? []
      : await deps.db
          .select({ domain: orgDomains.domain })
          .from(orgDomains)
          .where(
            and(
              inArray(orgDomains.domain, domains),
              isNotNull(orgDomains.verifiedAt),
              ne(orgDomains.orgId, row.id),
            ),
          )
          .all();
  for (const { domain } of taken)
    reasons.push({ table: "auth.sso_domains", id: domain, reason: "verified by another organization here" });
  return reasons.length > 0 ? { reasons } : { domains: [...new Set(domains)] };
}

async function ledgerRow(deps: Deps, id: string): Promise<ImportLedgerRow | undefined> {
  return deps.db
    .select()
    .from(importLedger)
    .where(and(eq(importLedger.kind, "org"), eq(importLedger.id, id)))
    .get();
}

/**
 * One org made or brought up to date. Each step finds what an earlier (perhaps interrupted) run made: the org, its one
 * connection, each domain; the ledger row is written last, so a run cut short is finished by the next.
 */
async function write(deps: Deps, row: OrgRow, domains: string[]): Promise<void> {
  if (!(await findOrg(deps, row.id))) await createOrg(deps, { name: row.name }, null, "import", row.id);
  const saml = { metadataXml: row.saml.metadataXml, enabled: row.enabled };
  const [connection] = await listConnections(deps, row.id);
  if (connection) await updateConnection(deps, row.id, connection.id, saml);
  else await createConnection(deps, row.id, { type: "saml", ...saml });
  const here = new Map((await listDomains(deps, row.id)).map((d) => [d.domain, d]));
  for (const domain of domains) {
    if (!here.has(domain)) await addDomain(deps, row.id, domain);
    if (!here.get(domain)?.verifiedAt) await verifyDomain(deps, row.id, domain, "admin");
  }
}

async function importOrg(deps: Deps, row: OrgRow, dryRun: boolean): Promise<Result> {
  const checked = await check(deps, row);
  if ("reasons" in checked) return { id: row.id, outcome: "skipped", reasons: checked.reasons };
  const warnings = mappingWarnings(row);
  const extra = warnings.length > 0 ? { warnings } : {};
  const fingerprint = await sha256Hex(JSON.stringify({ ...row, domains: checked.domains }));
  const before = await ledgerRow(deps, row.id);
  const exists = await findOrg(deps, row.id);
  // An org deleted here after an import stays deleted: the operator's word, as for users.
  if (before && !exists)
    return {
      id: row.id,
      outcome: "kept",
      reasons: [
        { table: "auth.sso_providers", id: row.id, reason: "deleted in this service since the last import" },
      ],
    };
  if (before?.fingerprint === fingerprint) return { id: row.id, outcome: "unchanged", ...extra };
  if (dryRun) return { id: row.id, outcome: before ? "updated" : "imported", ...extra };
  try {
    await write(deps, row, checked.domains);
  } catch (error) {
    // A domain verified by another org between the check and the write (a race): the next run says which.
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    return {
      id: row.id,
      outcome: "skipped",
      reasons: [{ table: "auth.sso_domains", id: row.id, reason: `${error.code}: ${error.message}` }],
    };
  }
  const now = deps.now();
  const ledger = { fingerprint, rowUpdatedAt: null, owner: null, parts: null, importedAt: now };
  // Organizations come only from Supabase's SSO providers (import-supabase): their ledger rows say so.
  await deps.db
    .insert(importLedger)
    .values({ kind: "org", id: row.id, system: "supabase", ...ledger })
    .onConflictDoUpdate({ target: [importLedger.kind, importLedger.id], set: ledger });
  return { id: row.id, outcome: before ? "updated" : "imported", ...extra };
}

/** Each org on its own: one bad provider never stops the others. */
export async function importOrgs(deps: Deps, rows: OrgRow[], dryRun: boolean): Promise<Result[]> {
  const results: Result[] = [];
  for (const row of rows) results.push(await importOrg(deps, row, dryRun));
  return results;
}
