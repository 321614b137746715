import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { serviceSettings } from "../db/schema";
import {
  BRAND_FIELDS,
  type Brand,
  brandColourSchema,
  brandLogoUrlSchema,
  brandNameSchema,
} from "../lib/brand";
import { logError } from "./context";

/**
 * Where the brand of the built-in pages comes from (contract §13): the environment's `AUTH_BRAND_*`, and the setting
 * made in the console or the admin API (`service_settings` row `brand` on the home database), which wins field by
 * field: a field the console leaves empty keeps the environment's value. "Reset to configuration" deletes the row.
 *
 * Pages read the console's setting through a per-isolate memory of 30 seconds, so a page view costs no D1 read; a
 * save forgets it in the isolate that saved, other isolates see the change within those 30 seconds
 * (docs/protection.md, "Brand").
 */

const SETTING = "brand";
const FRESH_FOR_MS = 30_000;

/** The console's setting as stored and as the admin API takes it: each field set, or null (the environment's). */
export const brandSettingsSchema = z
  .object({
    name: brandNameSchema.nullish(),
    logoUrl: brandLogoUrlSchema.nullish(),
    color: brandColourSchema("#1a73e8").nullish(),
    colorDark: brandColourSchema("#8ab4f8").nullish(),
  })
  .strict();

export type BrandSettings = z.input<typeof brandSettingsSchema>;

/** Only the fields that are set (a stored `null` or an absent field both mean "the environment's"). */
function setFields(settings: z.output<typeof brandSettingsSchema>): Brand {
  const brand: Brand = {};
  for (const field of BRAND_FIELDS) {
    const value = settings[field];
    if (value) brand[field] = value;
  }
  return brand;
}

/** The brand the environment sets (`AUTH_BRAND_*`, already checked by src/config.ts). */
export function configuredBrand(config: Config): Brand {
  return setFields({
    name: config.brand.name,
    logoUrl: config.brand.logoUrl,
    color: config.brand.color,
    colorDark: config.brand.colorDark,
  });
}

export interface StoredBrand {
  brand: Brand;
  /** Milliseconds since the epoch. */
  updatedAt: number;
}

/** The console's setting, read now (the console and the admin API show it fresh); null when none is made. */
export async function storedBrand(db: Db): Promise<StoredBrand | null> {
  const row = await db.select().from(serviceSettings).where(eq(serviceSettings.key, SETTING)).get();
  if (!row) return null;
  // Written only through `saveBrand`, but checked again: a row edited by hand must not put CSS or a script URL on
  // every page. What does not pass is ignored as a whole.
  const parsed = brandSettingsSchema.safeParse(row.value);
  return parsed.success ? { brand: setFields(parsed.data), updatedAt: row.updatedAt } : null;
}

/** The isolate's memory of the console's setting, per home database (settled plain data only). */
const remembered = new WeakMap<Db, { until: number; brand: Brand }>();

async function consoleBrand(db: Db): Promise<Brand> {
  const now = Date.now();
  const known = remembered.get(db);
  if (known && known.until > now) return known.brand;
  const brand = (await storedBrand(db))?.brand ?? {};
  remembered.set(db, { until: now + FRESH_FOR_MS, brand });
  return brand;
}

/**
 * The brand a page shows: the console's fields over the environment's. A failing read of the setting (D1 down) shows
 * the environment's brand rather than no page at all.
 */
export async function brandOf(deps: { db: Db; config: Config }, requestId = "brand"): Promise<Brand> {
  const configured = configuredBrand(deps.config);
  try {
    return { ...configured, ...(await consoleBrand(deps.db)) };
  } catch (error) {
    logError(requestId, "brand", error, "warn");
    return configured;
  }
}

/** Saves the console's setting (every field replaced); fields all empty is the same as a reset. */
export async function saveBrand(db: Db, settings: BrandSettings, now: number): Promise<Brand> {
  const brand = setFields(brandSettingsSchema.parse(settings));
  if (Object.keys(brand).length === 0) {
    await resetBrand(db);
    return brand;
  }
  await db
    .insert(serviceSettings)
    .values({ key: SETTING, value: brand, updatedAt: now })
    .onConflictDoUpdate({ target: serviceSettings.key, set: { value: brand, updatedAt: now } });
  remembered.delete(db);
  return brand;
}

/** Back to the environment's brand: the console's setting is deleted. */
export async function resetBrand(db: Db): Promise<void> {
  await db.delete(serviceSettings).where(eq(serviceSettings.key, SETTING));
  remembered.delete(db);
}
