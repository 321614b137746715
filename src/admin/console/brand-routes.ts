import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import type { AppEnv } from "../../http/app-env";
import { brandSettingsSchema } from "../../http/brand";
import { describeIssues } from "../../http/validation";
import { imageOrigin } from "../../lib/brand";
import { type AdminBrand, auditedFields, brandView, resetBrandSetting, updateBrand } from "../brand";
import { action, back, type Ctx, chromeOf, page, render } from "./handlers";
import { brandPage } from "./pages-brand";
import type { ConsoleSession } from "./session";

/**
 * The brand in the console (contract §13): the admin API's rules (`brandSettingsSchema`) and services, every change
 * audited like the API's. A refused value comes back on the form with the reason (400), never half-saved.
 */

const FIELDS = ["name", "logoUrl", "color", "colorDark"] as const;

async function showBrand(
  c: Ctx,
  session: ConsoleSession,
  view: AdminBrand,
  refused?: Parameters<typeof brandPage>[2],
) {
  // The preview shows the logo: its origin, and only it, may serve images to this page.
  const logo = view.brand.logoUrl ? imageOrigin(view.brand.logoUrl) : undefined;
  return render(
    c,
    "Brand",
    brandPage(await chromeOf(c, session, "brand"), view, refused),
    refused ? 400 : 200,
    { images: logo ? [logo] : [] },
  );
}

export const consoleBrandRoutes = new Hono<AppEnv>()
  .get(
    "/brand",
    page(async (c, session) => showBrand(c, session, await brandView(c.var.deps))),
  )
  .post(
    "/brand",
    action(async (c, session) => {
      const form = await c.req.parseBody();
      const values = Object.fromEntries(
        FIELDS.map((field) => [field, typeof form[field] === "string" ? (form[field] as string).trim() : ""]),
      ) as Record<(typeof FIELDS)[number], string>;
      // An empty field is "the configuration's": null, like the API's.
      const parsed = brandSettingsSchema.safeParse(
        Object.fromEntries(FIELDS.map((field) => [field, values[field].slice(0, 2100) || null])),
      );
      if (!parsed.success) {
        const error = describeIssues(parsed.error.issues);
        return showBrand(c, session, await brandView(c.var.deps), { error, values });
      }
      const view = await updateBrand(c.var.deps, parsed.data);
      auditAdminAction(c, "brand.update", null, auditedFields(view));
      return back(c, "/brand", "brand-saved");
    }),
  )
  .post(
    "/brand/reset",
    action(async (c) => {
      await resetBrandSetting(c.var.deps);
      auditAdminAction(c, "brand.reset");
      return back(c, "/brand", "brand-reset");
    }),
  );
