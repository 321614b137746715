import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { operation } from "../http/documented";
import { jsonBody } from "../http/validation";
import { importBody } from "./import-routes";
import { importOrgs, importOrgsBody } from "./org-import";
import { importResultsSchema } from "./wire";

/** Supabase's SSO providers as organizations (contract supabase.md §5), behind the admin secret. */
export const orgImportRoutes = new Hono<AppEnv>().post(
  "/import/nhost/orgs",
  operation({
    summary: "Import SSO providers as organizations",
    description:
      "Up to 100 of Supabase's SSO providers: each an organization under the provider's id, with a SAML connection " +
      "from the IdP's metadata and its domains verified. Per provider: `imported`, `updated`, `unchanged`, `kept` " +
      "(deleted here since) or `skipped` with the reasons; `warnings` name what of the attribute mapping is not " +
      "carried. `dryRun` checks without writing. The command `npm run admin -- import-supabase` calls it " +
      "(docs/migrating-from-supabase.md).",
    security: "admin-secret",
    answers: { 200: { description: "One result per provider, in order.", schema: importResultsSchema } },
  }),
  importBody,
  jsonBody(importOrgsBody),
  async (c) => {
    const { orgs, dryRun } = c.req.valid("json");
    return c.json({ results: await importOrgs(c.var.deps, orgs, dryRun) });
  },
);
