import { and, asc, eq, isNotNull, ne } from "drizzle-orm";
import { z } from "zod";
import { endSessionsUnderSso } from "../auth";
import { type OrgDomainRow, orgDomains } from "../db/schema";
import { AppError, UnavailableError } from "../errors";
import type { Deps } from "../http/deps";
import { randomToken } from "./random";
import { ssoEnforcingOrg } from "./sign-in-check";

/**
 * An organization's email domains (contract organizations.md §2). A domain routes sign-ins to the org's connection,
 * lets JIT make members, and may be put under enforced SSO only once verified: by a DNS TXT record
 * `_edge-auth-verify.<domain>` holding the value given at claim time, or by an admin. One organization at most
 * verifies a domain (the partial unique index decides, so two racing verifications can't both win); public mail
 * domains are refused outright, since no org owns gmail.com's users.
 */

/** Mail providers anyone can get an address at (the largest by users; enough to stop the obvious mistakes). */
export const PUBLIC_MAIL_DOMAINS = new Set([
  "gmail.com",
  "googlemail.com",
  "outlook.com",
  "hotmail.com",
  "hotmail.co.uk",
  "live.com",
  "msn.com",
  "yahoo.com",
  "yahoo.co.uk",
  "yahoo.co.jp",
  "ymail.com",
  "aol.com",
  "icloud.com",
  "me.com",
  "mac.com",
  "proton.me",
  "protonmail.com",
  "pm.me",
  "gmx.com",
  "gmx.de",
  "gmx.net",
  "web.de",
  "mail.com",
  "mail.ru",
  "yandex.ru",
  "yandex.com",
  "zoho.com",
  "fastmail.com",
  "tutanota.com",
  "tuta.io",
  "hey.com",
  "qq.com",
  "163.com",
  "126.com",
  "naver.com",
  "orange.fr",
  "free.fr",
  "t-online.de",
]);

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The domain as stored (lower case, no trailing dot), or a 400 when it is no domain name or a public mail domain. */
export function normalDomain(raw: string): string {
  const domain = raw.trim().toLowerCase().replace(/\.$/, "");
  const labels = domain.split(".");
  if (domain.length > 253 || labels.length < 2 || !labels.every((label) => LABEL.test(label))) {
    throw new AppError("domain-not-allowed", "domain: not a domain name (IDNs in their xn-- form)");
  }
  if (/^[0-9]+$/.test(labels.at(-1)!)) throw new AppError("domain-not-allowed", "domain: not a domain name");
  if (PUBLIC_MAIL_DOMAINS.has(domain)) {
    throw new AppError(
      "domain-not-allowed",
      `${domain} is a public mail domain: no organization can claim it`,
    );
  }
  return domain;
}

export const TXT_PREFIX = "_edge-auth-verify";

export const domainSchema = z.object({
  domain: z.string(),
  verified: z.boolean(),
  verifiedAt: z.string().nullable(),
  txtName: z.string().describe("The DNS name of the TXT record to add"),
  txtValue: z.string().describe("The value the TXT record must hold"),
  createdAt: z.string(),
});

export const toWireDomain = (row: OrgDomainRow) => ({
  domain: row.domain,
  verified: row.verifiedAt !== null,
  verifiedAt: row.verifiedAt === null ? null : new Date(row.verifiedAt).toISOString(),
  txtName: `${TXT_PREFIX}.${row.domain}`,
  txtValue: row.txtValue,
  createdAt: new Date(row.createdAt).toISOString(),
});

async function verifiedElsewhere(deps: Pick<Deps, "db">, orgId: string, domain: string) {
  return deps.db
    .select({ orgId: orgDomains.orgId })
    .from(orgDomains)
    .where(and(eq(orgDomains.domain, domain), isNotNull(orgDomains.verifiedAt), ne(orgDomains.orgId, orgId)))
    .get();
}

/** Claims the domain for the org (again: the same row back). A domain another org verified: 409. */
export async function addDomain(deps: Deps, orgId: string, raw: string): Promise<OrgDomainRow> {
  const domain = normalDomain(raw);
  if (await verifiedElsewhere(deps, orgId, domain)) throw new AppError("domain-already-verified");
  await deps.db
    .insert(orgDomains)
    .values({ orgId, domain, txtValue: `edge-auth-verify=${randomToken()}`, createdAt: deps.now() })
    .onConflictDoNothing();
  return getDomain(deps, orgId, domain);
}

export async function getDomain(deps: Pick<Deps, "db">, orgId: string, raw: string): Promise<OrgDomainRow> {
  const domain = raw.trim().toLowerCase().replace(/\.$/, "");
  const row = await deps.db
    .select()
    .from(orgDomains)
    .where(and(eq(orgDomains.orgId, orgId), eq(orgDomains.domain, domain)))
    .get();
  if (!row) throw new AppError("not-found", "no such domain in this organization");
  return row;
}

export async function listDomains(deps: Pick<Deps, "db">, orgId: string): Promise<OrgDomainRow[]> {
  return deps.db
    .select()
    .from(orgDomains)
    .where(eq(orgDomains.orgId, orgId))
    .orderBy(asc(orgDomains.domain))
    .limit(500)
    .all();
}

export async function deleteDomain(deps: Pick<Deps, "db">, orgId: string, raw: string): Promise<void> {
  const row = await getDomain(deps, orgId, raw);
  await deps.db.delete(orgDomains).where(and(eq(orgDomains.orgId, orgId), eq(orgDomains.domain, row.domain)));
}

/** TXT strings of a DoH JSON answer (RFC 8484's JSON sibling, as Cloudflare and Google serve it). */
function txtValues(answer: unknown): string[] {
  const records = (answer as { Answer?: unknown })?.Answer;
  if (!Array.isArray(records)) return [];
  return records
    .filter((record) => record?.type === 16 && typeof record.data === "string")
    .map(
      (record) =>
        // A TXT record is one or more quoted character-strings; its value is them joined (RFC 7208 §3.3).
        [...(record.data as string).matchAll(/"((?:[^"\\]|\\.)*)"/g)]
          .map((part) => (part[1] ?? "").replace(/\\(.)/g, "$1"))
          .join("") || (record.data as string),
    );
}

/** Looks the TXT record up over DNS-over-HTTPS (AUTH_DNS_RESOLVER_URL, the operator's trusted resolver). */
async function txtRecords(deps: Deps, name: string): Promise<string[]> {
  const url = new URL(deps.config.orgs.dnsResolver);
  url.searchParams.set("name", name);
  url.searchParams.set("type", "TXT");
  let response: Response;
  try {
    response = await deps.outbound(url.href, {
      headers: { accept: "application/dns-json" },
      signal: AbortSignal.timeout(5_000),
    });
  } catch (error) {
    throw new UnavailableError(`DNS resolver: ${(error as Error)?.name ?? "error"}`);
  }
  if (!response.ok) throw new UnavailableError(`DNS resolver answered ${response.status}`);
  const text = await response.text();
  if (text.length > 64 * 1024) throw new UnavailableError("DNS resolver: answer too large");
  try {
    return txtValues(JSON.parse(text));
  } catch {
    throw new UnavailableError("DNS resolver: answer not JSON");
  }
}

/**
 * Marks the org's domain verified: after finding its TXT record (`dns`), or at an admin's word. Verified by another
 * org (now, or by a race the unique index settles): 409 `domain-already-verified`.
 */
export async function verifyDomain(
  deps: Deps,
  orgId: string,
  raw: string,
  how: "dns" | "admin",
): Promise<OrgDomainRow> {
  const row = await getDomain(deps, orgId, raw);
  if (row.verifiedAt !== null) return row;
  if (await verifiedElsewhere(deps, orgId, row.domain)) throw new AppError("domain-already-verified");
  if (how === "dns") {
    const values = await txtRecords(deps, `${TXT_PREFIX}.${row.domain}`);
    if (!values.includes(row.txtValue)) throw new AppError("domain-verification-failed");
  }
  let verified: OrgDomainRow;
  try {
    const updated = await deps.db
      .update(orgDomains)
      .set({ verifiedAt: deps.now() })
      .where(and(eq(orgDomains.orgId, orgId), eq(orgDomains.domain, row.domain)))
      .returning()
      .get();
    if (!updated) throw new AppError("not-found", "no such domain in this organization");
    verified = updated;
  } catch (error) {
    if (String((error as Error)?.message ?? "").includes("UNIQUE"))
      throw new AppError("domain-already-verified");
    throw error;
  }
  // One more domain of an org that enforces SSO: its people's sessions by the refused methods end now.
  if ((await ssoEnforcingOrg(deps, `x@${verified.domain}`)) === orgId) {
    await endSessionsUnderSso(deps, [verified.domain]);
  }
  return verified;
}
