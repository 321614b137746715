-- Rows of one user live in the user's shard, global rows in the home database (src/db/shards.ts): a foreign key
-- between the two can never hold, since the parent row is in another database. Six go, and the service does what
-- their cascades did (src/db/client-rows.ts, src/db/housekeeping.ts): a client's grants, codes and consents, in each
-- user's shard, are deleted with the client; the clients a user registered, the device authorizations they approved
-- and the provider tokens waiting for them, home rows, go with the user (removeHomeRowsOfUser). Same-database keys
-- stay (a grant, code or consent to its user; a legacy refresh token to its grant; a device authorization to its
-- client).
--
-- SQLite cannot drop a foreign key in place: each table is rebuilt. D1 applies a migration with foreign keys on
-- (`PRAGMA foreign_keys=OFF` is ignored there), and dropping a parent table deletes, or refuses for, the rows that
-- point at it. So every new table is filled before any old one is dropped, children are dropped before their
-- parents, and a new child points at its new parent (`__new_…`), which the rename carries over.
CREATE TABLE `__new_oauth2_clients` (
	`client_id` text PRIMARY KEY NOT NULL,
	`secret_hash` text,
	`client_name` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`scopes` text NOT NULL,
	`grant_types` text NOT NULL,
	`token_endpoint_auth_method` text NOT NULL,
	`access_token_lifetime` integer NOT NULL,
	`refresh_token_lifetime` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`application_type` text DEFAULT 'web' NOT NULL,
	`registration` text DEFAULT 'admin' NOT NULL,
	`registered_by_user_id` text,
	`registration_token_hash` text,
	`last_used_at` integer,
	`client_uri` text,
	`logo_uri` text,
	`contacts` text,
	`software_id` text,
	`software_version` text,
	`resources` text
);
--> statement-breakpoint
INSERT INTO `__new_oauth2_clients`("client_id", "secret_hash", "client_name", "redirect_uris", "scopes", "grant_types", "token_endpoint_auth_method", "access_token_lifetime", "refresh_token_lifetime", "created_at", "updated_at", "application_type", "registration", "registered_by_user_id", "registration_token_hash", "last_used_at", "client_uri", "logo_uri", "contacts", "software_id", "software_version", "resources") SELECT "client_id", "secret_hash", "client_name", "redirect_uris", "scopes", "grant_types", "token_endpoint_auth_method", "access_token_lifetime", "refresh_token_lifetime", "created_at", "updated_at", "application_type", "registration", "registered_by_user_id", "registration_token_hash", "last_used_at", "client_uri", "logo_uri", "contacts", "software_id", "software_version", "resources" FROM `oauth2_clients`;--> statement-breakpoint
CREATE TABLE `__new_device_authorizations` (
	`device_code_hash` text PRIMARY KEY NOT NULL,
	`user_code_hash` text NOT NULL,
	`client_id` text NOT NULL,
	`scopes` text NOT NULL,
	`resources` text NOT NULL,
	`status` text NOT NULL,
	`user_id` text,
	`auth_time` integer,
	`interval_seconds` integer NOT NULL,
	`last_polled_at` integer,
	`too_fast` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `__new_oauth2_clients`(`client_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_device_authorizations`("device_code_hash", "user_code_hash", "client_id", "scopes", "resources", "status", "user_id", "auth_time", "interval_seconds", "last_polled_at", "too_fast", "created_at", "expires_at") SELECT "device_code_hash", "user_code_hash", "client_id", "scopes", "resources", "status", "user_id", "auth_time", "interval_seconds", "last_polled_at", "too_fast", "created_at", "expires_at" FROM `device_authorizations`;--> statement-breakpoint
CREATE TABLE `__new_oauth2_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scopes` text NOT NULL,
	`resources` text DEFAULT '[]' NOT NULL,
	`auth_time` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_oauth2_grants`("id", "client_id", "user_id", "scopes", "resources", "auth_time", "created_at", "last_used_at", "expires_at") SELECT "id", "client_id", "user_id", "scopes", "resources", "auth_time", "created_at", "last_used_at", "expires_at" FROM `oauth2_grants`;--> statement-breakpoint
CREATE TABLE `__new_oauth2_refresh_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `__new_oauth2_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_oauth2_refresh_tokens`("token_hash", "grant_id", "expires_at") SELECT "token_hash", "grant_id", "expires_at" FROM `oauth2_refresh_tokens`;--> statement-breakpoint
CREATE TABLE `__new_oauth2_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`request_id` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text,
	`nonce` text,
	`scopes` text NOT NULL,
	`resources` text DEFAULT '[]' NOT NULL,
	`auth_time` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`grant_id` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_oauth2_codes`("code_hash", "request_id", "client_id", "user_id", "redirect_uri", "code_challenge", "nonce", "scopes", "resources", "auth_time", "expires_at", "used_at", "grant_id") SELECT "code_hash", "request_id", "client_id", "user_id", "redirect_uri", "code_challenge", "nonce", "scopes", "resources", "auth_time", "expires_at", "used_at", "grant_id" FROM `oauth2_codes`;--> statement-breakpoint
CREATE TABLE `__new_oauth2_consents` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`scopes` text NOT NULL,
	`granted_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_oauth2_consents`("user_id", "client_id", "scopes", "granted_at") SELECT "user_id", "client_id", "scopes", "granted_at" FROM `oauth2_consents`;--> statement-breakpoint
CREATE TABLE `__new_provider_token_handoffs` (
	`user_id` text NOT NULL,
	`provider` text NOT NULL,
	`sealed` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `provider`)
);
--> statement-breakpoint
INSERT INTO `__new_provider_token_handoffs`("user_id", "provider", "sealed", "expires_at") SELECT "user_id", "provider", "sealed", "expires_at" FROM `provider_token_handoffs`;--> statement-breakpoint
DROP TABLE `provider_token_handoffs`;--> statement-breakpoint
DROP TABLE `oauth2_refresh_tokens`;--> statement-breakpoint
DROP TABLE `oauth2_codes`;--> statement-breakpoint
DROP TABLE `oauth2_consents`;--> statement-breakpoint
DROP TABLE `oauth2_grants`;--> statement-breakpoint
DROP TABLE `device_authorizations`;--> statement-breakpoint
DROP TABLE `oauth2_clients`;--> statement-breakpoint
ALTER TABLE `__new_oauth2_clients` RENAME TO `oauth2_clients`;--> statement-breakpoint
ALTER TABLE `__new_device_authorizations` RENAME TO `device_authorizations`;--> statement-breakpoint
ALTER TABLE `__new_oauth2_grants` RENAME TO `oauth2_grants`;--> statement-breakpoint
ALTER TABLE `__new_oauth2_refresh_tokens` RENAME TO `oauth2_refresh_tokens`;--> statement-breakpoint
ALTER TABLE `__new_oauth2_codes` RENAME TO `oauth2_codes`;--> statement-breakpoint
ALTER TABLE `__new_oauth2_consents` RENAME TO `oauth2_consents`;--> statement-breakpoint
ALTER TABLE `__new_provider_token_handoffs` RENAME TO `provider_token_handoffs`;--> statement-breakpoint
CREATE UNIQUE INDEX `device_authorizations_user_code_hash_unique` ON `device_authorizations` (`user_code_hash`);--> statement-breakpoint
CREATE INDEX `device_authorizations_expires_at` ON `device_authorizations` (`expires_at`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_user_id` ON `oauth2_grants` (`user_id`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_client_id` ON `oauth2_grants` (`client_id`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_expires_at` ON `oauth2_grants` (`expires_at`);--> statement-breakpoint
CREATE INDEX `oauth2_refresh_tokens_grant_id` ON `oauth2_refresh_tokens` (`grant_id`);--> statement-breakpoint
CREATE INDEX `oauth2_refresh_tokens_expires_at` ON `oauth2_refresh_tokens` (`expires_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_codes_request_id_unique` ON `oauth2_codes` (`request_id`);--> statement-breakpoint
CREATE INDEX `oauth2_codes_expires_at` ON `oauth2_codes` (`expires_at`);--> statement-breakpoint
CREATE INDEX `oauth2_consents_client_id` ON `oauth2_consents` (`client_id`);--> statement-breakpoint
CREATE INDEX `provider_token_handoffs_expires_at` ON `provider_token_handoffs` (`expires_at`);
