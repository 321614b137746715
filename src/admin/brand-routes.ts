import { Hono } from "hono";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { brandSettingsSchema } from "../http/brand";
import { NO_CONTENT, operation } from "../http/documented";
import { jsonBody } from "../http/validation";
import { adminBrandSchema, auditedFields, brandView, resetBrandSetting, updateBrand } from "./brand";

/** The brand of the built-in pages in the admin API (contract §13), the console's "Brand" page as a script can use it. */
export const brandAdminRoutes = new Hono<AppEnv>()
  .get(
    "/brand",
    operation({
      summary: "Show the brand",
      description:
        "The brand the built-in pages show (sign-in, consent, device, logout, the account center): `brand`, made of " +
        "the setting made here (`console`), field by field, over the environment's `AUTH_BRAND_*` (`configuration`).",
      security: "admin-secret",
      answers: { 200: { description: "The brand.", schema: adminBrandSchema } },
    }),
    async (c) => c.json(await brandView(c.var.deps)),
  )
  .put(
    "/brand",
    operation({
      summary: "Set the brand",
      description:
        "Replaces the setting: `name` (1–80 characters), `logoUrl` (https), `color` and `colorDark` (`#rrggbb`). A " +
        "field left out or `null` is the environment's again; every field empty is the same as `DELETE`. Text " +
        "colours are derived from the colours for contrast (WCAG 4.5:1). Pages show the change within 30 seconds. " +
        "Audited (`admin.brand.update`).",
      security: "admin-secret",
      answers: { 200: { description: "The brand now.", schema: adminBrandSchema } },
    }),
    jsonBody(brandSettingsSchema),
    async (c) => {
      const view = await updateBrand(c.var.deps, c.req.valid("json"));
      auditAdminAction(c, "brand.update", null, auditedFields(view));
      return c.json(view);
    },
  )
  .delete(
    "/brand",
    operation({
      summary: "Reset the brand to the configuration",
      description:
        "Deletes the setting made in the console or the API: the pages show the environment's `AUTH_BRAND_*` " +
        "again (within 30 seconds). Audited (`admin.brand.reset`).",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Reset.") },
    }),
    async (c) => {
      await resetBrandSetting(c.var.deps);
      auditAdminAction(c, "brand.reset");
      return c.body(null, 204);
    },
  );
