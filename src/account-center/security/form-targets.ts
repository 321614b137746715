import type { Context } from "hono";
import type { AppEnv } from "../../http/app-env";

/**
 * The origins a security form's post may end at, for the page's CSP `form-action`: "Link another account" posts here
 * and is sent on to the provider's authorization endpoint, and browsers hold the whole redirect chain of a form to
 * `form-action` (as on the sign-in page, src/pages/sign-in-pages.ts). Only the enabled providers'. A leaf
 * file (types only), so the frame can read it without importing the sections.
 */
export function securityFormTargets(c: Context<AppEnv>): string[] {
  return [
    ...new Set(
      Object.values(c.var.config.providers.enabled).map(
        (settings) => new URL(settings.authorizationUrl).origin,
      ),
    ),
  ];
}
