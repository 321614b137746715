import { z } from "zod";
import { type BrandSettings, configuredBrand, resetBrand, saveBrand, storedBrand } from "../http/brand";
import type { Deps } from "../http/deps";
import type { Brand } from "../lib/brand";

/**
 * The brand as the admin API and the console show it (contract §13): what the pages show, the setting made here, and
 * the environment's, so an operator sees which wins. The setting itself lives in src/http/brand.ts.
 */

const wireFieldsSchema = z.object({
  name: z.string().nullable(),
  logoUrl: z.string().nullable(),
  color: z.string().nullable().describe("#rrggbb: buttons and links on light pages"),
  colorDark: z.string().nullable().describe("#rrggbb: on dark pages; null: the light colour"),
});

export const adminBrandSchema = z.object({
  brand: wireFieldsSchema.describe(
    "What the pages show: the setting made here, field by field over the environment's",
  ),
  console: wireFieldsSchema
    .nullable()
    .describe("The setting made in the console or this API; null: none (the environment's brand)"),
  configuration: wireFieldsSchema.describe(
    "The environment's AUTH_BRAND_NAME, AUTH_BRAND_LOGO_URL, AUTH_BRAND_COLOR, AUTH_BRAND_COLOR_DARK",
  ),
  updatedAt: z.iso.datetime().nullable().describe("When the setting was last saved; null: none"),
});
export type AdminBrand = z.infer<typeof adminBrandSchema>;

const wireFields = (brand: Brand) => ({
  name: brand.name ?? null,
  logoUrl: brand.logoUrl ?? null,
  color: brand.color ?? null,
  colorDark: brand.colorDark ?? null,
});

/** The brand now: read fresh (never the pages' 30-second memory), so the console shows what it just saved. */
export async function brandView(deps: Pick<Deps, "db" | "config">): Promise<AdminBrand> {
  const stored = await storedBrand(deps.db);
  const configuration = configuredBrand(deps.config);
  return {
    brand: wireFields({ ...configuration, ...(stored?.brand ?? {}) }),
    console: stored ? wireFields(stored.brand) : null,
    configuration: wireFields(configuration),
    updatedAt: stored ? new Date(stored.updatedAt).toISOString() : null,
  };
}

/** Saves the setting (every field replaced: one left out or null is the environment's again). */
export async function updateBrand(deps: Deps, settings: BrandSettings): Promise<AdminBrand> {
  await saveBrand(deps.db, settings, deps.now());
  return brandView(deps);
}

export async function resetBrandSetting(deps: Deps): Promise<void> {
  await resetBrand(deps.db);
}

/** The fields a change set, for the audit log (the values are public: every page shows them). */
export const auditedFields = (view: AdminBrand) => ({ brand: view.console ?? {} });
