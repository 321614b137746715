// The SSO reader of `import-supabase` (contract supabase.md §5): GoTrue's `auth.sso_providers` with their
// `auth.saml_providers` and `auth.sso_domains`, each sent as an organization (`POST …/orgs`,
// src/move-in/org-import.ts) under the provider's id, with a SAML connection from the IdP's metadata and the domains
// verified. The users GoTrue made through a provider come with the users reader (user-bundles.mjs): this service's
// SAML sign-in finds them by their address inside the org's verified domains.
import { countOutcome } from "../import/outcomes.mjs";
import { countGone, MASS_REMOVAL, removeGone } from "../import-nhost/removals.mjs";

const MAX_METADATA = 60_000;
const MAX_DOMAINS = 100;

/** Provider id → the set of its domains (lower case), for the users reader's SSO identities. */
export async function ssoDomainsOf(supabase) {
  const out = new Map();
  if (!supabase.has("auth.sso_domains")) return out;
  const rows = await supabase.query(
    "SELECT sso_provider_id::text AS provider, lower(domain) AS domain FROM auth.sso_domains",
  );
  for (const row of rows) {
    if (!out.has(row.provider)) out.set(row.provider, new Set());
    out.get(row.provider).add(row.domain);
  }
  return out;
}

/** Every provider with its SAML provider (null when GoTrue has none) and domains, in id order. */
async function providers(supabase) {
  return supabase.query(
    `SELECT p.id::text AS id, p.resource_id,
       ${supabase.hasColumn("auth.sso_providers", "disabled") ? "p.disabled" : "NULL AS disabled"},
       s.id::text AS saml_id, s.entity_id, s.metadata_xml, s.metadata_url, s.attribute_mapping,
       ${supabase.hasColumn("auth.saml_providers", "name_id_format") ? "s.name_id_format" : "NULL AS name_id_format"},
       COALESCE((SELECT array_agg(d.domain ORDER BY d.domain) FROM auth.sso_domains d
         WHERE d.sso_provider_id = p.id), '{}') AS domains
     FROM auth.sso_providers p LEFT JOIN auth.saml_providers s ON s.sso_provider_id = p.id
     ORDER BY p.id`,
  );
}

/**
 * A provider as the wire's org, or the reason it can't be one. GoTrue's provider has no name: its `resource_id` (the
 * name its admin gave it) when set, else its first domain, else the IdP's entity id.
 */
export function orgOf(provider) {
  if (!provider.saml_id) return { reason: "an SSO provider without a SAML provider: nothing to connect to" };
  // The connection's own bounds (src/sso/connections.ts, src/move-in/org-import.ts): said here, per provider, rather
  // than refused for the whole batch.
  if (provider.metadata_xml.length > MAX_METADATA)
    return {
      reason: `metadata_xml of ${provider.metadata_xml.length} characters: a connection takes at most ${MAX_METADATA}`,
    };
  if (provider.domains.length > MAX_DOMAINS)
    return {
      reason: `${provider.domains.length} domains: an organization imported takes at most ${MAX_DOMAINS}`,
    };
  return {
    org: {
      id: provider.id,
      name: String(provider.resource_id || provider.domains[0] || provider.entity_id).slice(0, 200),
      domains: provider.domains,
      saml: {
        metadataXml: provider.metadata_xml,
        nameIdFormat: provider.name_id_format ?? null,
        attributeMapping: provider.attribute_mapping ?? null,
      },
      enabled: provider.disabled !== true,
    },
  };
}

/** The reader: every provider, counted per table, sent in batches through the same sender as the users. */
export async function sso(run) {
  const { supabase, report, progress } = run;
  if (!supabase.has("auth.sso_providers")) return;
  const rows = await providers(supabase);
  const counts = report.counts("auth.sso_providers");
  counts.read += rows.length;
  const orgs = [];
  for (const provider of rows) {
    report.add("auth.saml_providers", "read", provider.saml_id ? 1 : 0);
    report.add("auth.sso_domains", "read", provider.domains.length);
    const { org, reason } = orgOf(provider);
    if (!org) {
      report.add("auth.sso_providers", "skipped");
      report.add("auth.sso_domains", "skipped", provider.domains.length);
      report.notCarried("auth.sso_providers", provider.id, reason);
      continue;
    }
    orgs.push(org);
  }
  if (orgs.length > 0) {
    const results = await run.send("/orgs", "orgs", orgs, { dryRun: run.dryRun });
    results.forEach((result, i) => {
      countOutcome(report, "auth.sso_providers", result, {
        "auth.saml_providers": 1,
        "auth.sso_domains": orgs[i].domains.length,
      });
    });
  }
  if (rows.length > 0) progress.done("auth.sso_providers", counts);
}

/**
 * The orgs earlier runs made from SSO providers that Supabase no longer has (GoTrue's admin deletion takes the SAML
 * provider and domains with the provider; its users stay, and so they do here): removed here, with the org's
 * connection and domains, under the users' rule (the ledger says what came from Supabase: an org made here is never
 * touched). Run after the users' removals, whose guards have shown this is the database imported before; so "no
 * providers left" is taken as Supabase's word (deleting a project's only provider is ordinary), and only a mass
 * removal (over half of many) waits for --allow-mass-removal. A database from before GoTrue had SSO removes nothing.
 */
export async function removeGoneProviders({ api, supabase, report, progress, dryRun, allowMassRemoval }) {
  if (!supabase.has("auth.sso_providers")) return;
  const ids = () => supabase.ids("auth.sso_providers");
  if (!allowMassRemoval) {
    const { gone, total } = await countGone(api, ids(), "org");
    if (gone > MASS_REMOVAL && gone * 2 > total)
      throw new Error(
        `${gone} of ${total} imported SSO providers are not in this database: nothing more was removed or ` +
          "written. If they really were deleted, run again with --allow-mass-removal.",
      );
  }
  const table = "auth.sso_providers";
  await removeGone({ api, nhostIds: ids(), kind: "org", table, dryRun, report, progress });
  const { deleted, kept } = report.counts(table);
  if (deleted || kept) progress.done(`${table} (removals)`, report.counts(table));
}
