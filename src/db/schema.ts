/**
 * Every table, gathered from the files that declare them (src/db/tables/: one file per feature that has tables, named
 * as its folder, and shared.ts for the plumbing's own), so that a caller imports a table from one place and
 * `createDb` knows them all. drizzle-kit reads the same files (drizzle.config.ts), not this one. Every table is
 * described in docs/storage-schema.md.
 */
export * from "./tables/admin";
export * from "./tables/auth";
export * from "./tables/impersonation";
export * from "./tables/move-in";
export * from "./tables/oauth2";
export * from "./tables/orgs";
export * from "./tables/permissions";
export * from "./tables/providers";
export * from "./tables/scim";
export * from "./tables/setup-links";
export * from "./tables/shared";
export * from "./tables/sso";
export * from "./tables/storage";
export * from "./tables/vault";
export * from "./tables/webhooks";
