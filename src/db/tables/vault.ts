import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./auth";

/**
 * The token vault (contract operators.md §3): accounts a user connected at a provider, for agents to use. Rows are
 * the user's, in the user's shard (src/db/shards.ts), gone with the user; times are Unix milliseconds.
 */

/**
 * One connected account per (user, provider). The provider's tokens are one AES-GCM sealed JSON value
 * (`{accessToken, refreshToken?}`, src/lib/crypto.ts): never plain, never returned to a browser. `version` grows
 * with every write of the tokens; `refreshingUntil` is the lease of the one exchange refreshing them (a conditional
 * UPDATE takes it), so two exchanges at once never both spend a refresh token the provider rotates.
 */
export const vaultConnections = sqliteTable(
  "vault_connections",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider").notNull(),
    /** Who the user is at the provider (its subject), and the address it gave, for the user's list. */
    providerUserId: text("provider_user_id").notNull(),
    providerEmail: text("provider_email"),
    sealed: text("sealed").notNull(),
    /** The scopes the provider granted (its answer's `scope`, else those asked). */
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /** When the access token expires; null when the provider did not say (it does not expire, or we cannot know). */
    expiresAt: integer("expires_at"),
    version: integer("version").notNull().default(1),
    refreshingUntil: integer("refreshing_until").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.provider] })],
);

/**
 * Which OAuth2 client the user let use which connection (contract §3: "the user consented to that client using that
 * provider"), and its last release. The client lives in the home database: no foreign key (as oauth2_consents).
 */
export const vaultConsents = sqliteTable(
  "vault_consents",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider").notNull(),
    clientId: text("client_id").notNull(),
    grantedAt: integer("granted_at").notNull(),
    /** The last time the client was given the provider's token (null: never), and how many times. */
    lastUsedAt: integer("last_used_at"),
    uses: integer("uses").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.provider, t.clientId] }),
    index("vault_consents_client_id").on(t.clientId),
  ],
);
