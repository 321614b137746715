/**
 * Moving in from Nhost (contract move-in §2–3): the admin API the import command writes through, and Nhost's
 * mailed-link path sent on to the verify endpoint (both declared in feature.ts, mounted by src/runtime/app.ts). Imported
 * access tokens (`AUTH_IMPORTED_JWT_SECRET`) are accepted, read-only, after the recorded cut-over (cut-over-routes.ts,
 * src/http/imported-tokens.ts); imported refresh tokens rotate through the token families' drawer of tokens found by
 * hash (src/token-families/legacy/).
 */
export { cutOverAdminRoutes } from "./cut-over-routes";
export { importAdminRoutes } from "./import-routes";
export { ledgerRows } from "./ledger";
export { nhostLinkRoutes } from "./nhost-links";
