import { z } from "zod";
import type { FeatureSettingsSlice } from "../config";
import { list, settingsSlice, url } from "../settings/kit";

/** Organizations (contract organizations.md §1–2). */
const vars = z.object({
  /** Member roles beyond `owner`, `admin` and `member`, comma-separated (lower-case letters, digits, `-` and `_`). */
  AUTH_ORG_ROLES: list().pipe(
    z.array(z.string().regex(/^[a-z0-9_-]{1,40}$/, "role names are lower-case letters, digits, - and _")),
  ),
  /** DNS-over-HTTPS (JSON API) that verifies an organization's email domain by its TXT record (organizations.md §2). */
  AUTH_DNS_RESOLVER_URL: url.default("https://cloudflare-dns.com/dns-query"),
});

const resolve = (data: z.output<typeof vars>) => ({
  orgs: { roles: data.AUTH_ORG_ROLES, dnsResolver: data.AUTH_DNS_RESOLVER_URL },
});

export const orgSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type OrgSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends OrgSettings {}
}
