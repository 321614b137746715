import { accountCenterFeature } from "../account-center/feature";
import { adminFeature } from "../admin/feature";
import { auditExportFeature } from "../audit-export/feature";
import { authFeature } from "../auth/feature";
import { supabaseFeature } from "../faces/supabase/feature";
import { fedcmFeature } from "../fedcm/feature";
import { impersonationFeature } from "../impersonation/feature";
import { mirrorFeature } from "../mirror/feature";
import { moveInFeature } from "../move-in/feature";
import { oauth2Feature } from "../oauth2/feature";
import { orgsFeature } from "../orgs/feature";
import { pagesFeature } from "../pages/feature";
import { passwordMigrationFeature } from "../password-migration/feature";
import { permissionsFeature } from "../permissions/feature";
import { platformFeature } from "../platform/feature";
import { providersFeature } from "../providers/feature";
import { riskFeature } from "../risk/feature";
import { scimFeature } from "../scim/feature";
import { setupLinksFeature } from "../setup-links/feature";
import { ssoFeature } from "../sso/feature";
import { storageFeature } from "../storage/feature";
import { vaultFeature } from "../vault/feature";
import { webhooksFeature } from "../webhooks/feature";
import type { Feature } from "./feature";

/**
 * THE list of features: the app mounts their routes in this order (src/runtime/app.ts), the queue handler runs their
 * consumers (consumers.ts), the cron their housekeeping (cron.ts); drizzle-kit reads their tables and the lint knows
 * their folders from the imports above (scripts/features.cjs reads them), and test/tooling/features.test.ts proves
 * they all agree. A new feature is its folder, with its feature.ts, and one line here (and its import).
 */
export const FEATURES: readonly Feature[] = [
  authFeature,
  providersFeature,
  orgsFeature,
  ssoFeature,
  // Risk-aware sign-in (issue 47): a gate after every first factor, before the session, and one before a sign-up.
  riskFeature,
  scimFeature,
  // Setup links for a customer's IT admin (operators.md §5): its pages use the sso and scim features above.
  setupLinksFeature,
  oauth2Feature,
  // FedCM's identity provider (docs/fedcm.md): the browser's own prompt, its assertion an OAuth2 code of the above.
  fedcmFeature,
  // The token vault (operators.md §3): its API beside the user's other routes; the exchange is oauth2's.
  vaultFeature,
  // Right after the authorization server: its on switch covers the pages under /oauth2/ (src/pages/routes.ts).
  pagesFeature,
  accountCenterFeature,
  adminFeature,
  // Support acting as a user (contract operators.md §1): its admin routes, its landing link, its sweep.
  impersonationFeature,
  webhooksFeature,
  // The audit's export to an OpenTelemetry collector: a consumer of the event stream (contract operators.md §4).
  auditExportFeature,
  moveInFeature,
  passwordMigrationFeature,
  mirrorFeature,
  storageFeature,
  // Cedar behind AuthZEN (contract platform.md §2): its API at the host's root, its admin routes, its cleanup.
  permissionsFeature,
  // A face: another product's API over the same core, at its own prefix (src/faces/).
  supabaseFeature,
  // The service binding's entrypoints (src/runtime/entrypoints/): no routes, the app's Workers call it over RPC.
  platformFeature,
];
