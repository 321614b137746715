-- Organizations, their enterprise connections (OIDC, SAML), verified domains and SCIM provisioning (contract
-- organizations.md). The new tables are used in the home database (`DB`) only, like the OAuth2 clients: they belong to
-- no one user. A session, an OAuth2 code and a grant (each in its user's shard) name the organization they act in.
CREATE TABLE `org_domains` (
	`org_id` text NOT NULL,
	`domain` text NOT NULL,
	`txt_value` text NOT NULL,
	`verified_at` integer,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`org_id`, `domain`),
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_domains_verified` ON `org_domains` (`domain`) WHERE verified_at IS NOT NULL;--> statement-breakpoint
CREATE TABLE `org_invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`ticket_hash` text NOT NULL,
	`invited_by` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_invitations_ticket_hash_unique` ON `org_invitations` (`ticket_hash`);--> statement-breakpoint
CREATE INDEX `org_invitations_org` ON `org_invitations` (`org_id`);--> statement-breakpoint
CREATE INDEX `org_invitations_expires_at` ON `org_invitations` (`expires_at`);--> statement-breakpoint
CREATE TABLE `org_members` (
	`org_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`source` text NOT NULL,
	`provisioned` integer DEFAULT false NOT NULL,
	`active` integer DEFAULT true NOT NULL,
	`external_id` text,
	`scim_attributes` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`org_id`, `user_id`),
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `org_members_user` ON `org_members` (`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `org_members_external_id` ON `org_members` (`org_id`,`external_id`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`enforce_sso` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_slug_unique` ON `organizations` (`slug`);--> statement-breakpoint
CREATE TABLE `scim_group_members` (
	`group_id` text NOT NULL,
	`user_id` text NOT NULL,
	PRIMARY KEY(`group_id`, `user_id`),
	FOREIGN KEY (`group_id`) REFERENCES `scim_groups`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `scim_group_members_user` ON `scim_group_members` (`user_id`);--> statement-breakpoint
CREATE TABLE `scim_groups` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`display_name` text NOT NULL,
	`external_id` text,
	`role` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `scim_groups_org` ON `scim_groups` (`org_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `scim_groups_org_name` ON `scim_groups` (`org_id`,`display_name`);--> statement-breakpoint
CREATE TABLE `scim_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scim_tokens_token_hash_unique` ON `scim_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `scim_tokens_org` ON `scim_tokens` (`org_id`);--> statement-breakpoint
CREATE TABLE `sso_assertion_ids` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sso_assertion_ids_expires_at` ON `sso_assertion_ids` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sso_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`type` text NOT NULL,
	`settings` text NOT NULL,
	`default_role` text DEFAULT 'member' NOT NULL,
	`role_mapping` text DEFAULT '{}' NOT NULL,
	`allow_idp_initiated` integer DEFAULT false NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sso_connections_org` ON `sso_connections` (`org_id`);--> statement-breakpoint
CREATE TABLE `sso_requests` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`connection_id` text NOT NULL,
	`code_verifier_sealed` text,
	`nonce` text,
	`redirect_to` text NOT NULL,
	`browser_hash` text NOT NULL,
	`result` text,
	`result_hash` text,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sso_requests_result_hash_unique` ON `sso_requests` (`result_hash`);--> statement-breakpoint
CREATE INDEX `sso_requests_expires_at` ON `sso_requests` (`expires_at`);--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `org_id` text;--> statement-breakpoint
ALTER TABLE `oauth2_grants` ADD `org_id` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `org_id` text;--> statement-breakpoint
CREATE INDEX `sessions_user_org` ON `sessions` (`user_id`,`org_id`);