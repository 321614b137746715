import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./auth";

/**
 * Social and OAuth providers' tables: linked identities, pending sign-ins, token hand-offs. Every table is
 * described in docs/storage-schema.md; times are Unix milliseconds.
 */

/** An external identity linked to a user (contract §7): one user per (provider, provider user id). */
export const userProviders = sqliteTable(
  "user_providers",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider").notNull(),
    providerUserId: text("provider_user_id").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("user_providers_identity").on(t.provider, t.providerUserId),
    index("user_providers_user_id").on(t.userId),
  ],
);

/**
 * A redirect to a provider waiting for its callback (contract §7), ten minutes. The state sent to the provider is
 * only known by its SHA-256 here; the row is taken by one `DELETE … RETURNING`, so a callback completes once.
 */
export const providerRequests = sqliteTable(
  "provider_requests",
  {
    stateHash: text("state_hash").primaryKey(),
    provider: text("provider").notNull(),
    /** The PKCE verifier, AES-GCM under `AUTH_ENCRYPTION_KEY`; null for providers without PKCE. */
    codeVerifierSealed: text("code_verifier_sealed"),
    nonce: text("nonce"),
    redirectTo: text("redirect_to").notNull(),
    /** The sign-up options of the request (JSON), applied if the callback creates the user. */
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** With `connect`: the signed-in user the identity is linked to. */
    connectUserId: text("connect_user_id"),
    /** The app's own `state`, handed back with the redirect. */
    appState: text("app_state"),
    /** SHA-256 of the starting browser's binding cookie (src/http/browser-binding.ts): the callback must present it. */
    browserHash: text("browser_hash").notNull().default(""),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("provider_requests_expires_at").on(t.expiresAt)],
);

/** The provider's tokens of the newest sign-in, sealed, readable once by the signed-in user (getProviderTokens). */
export const providerTokenHandoffs = sqliteTable(
  "provider_token_handoffs",
  {
    /** The user lives in their shard, this row in the home database: no foreign key (migration 0022). */
    userId: text("user_id").notNull(),
    provider: text("provider").notNull(),
    /** JSON `{accessToken, expiresAt, refreshToken?}`, AES-GCM under `AUTH_ENCRYPTION_KEY`. */
    sealed: text("sealed").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.provider] }),
    index("provider_token_handoffs_expires_at").on(t.expiresAt),
  ],
);
