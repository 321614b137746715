CREATE TABLE `setup_links` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`intents` text NOT NULL,
	`created_by` text,
	`claimed` text DEFAULT '[]' NOT NULL,
	`domains` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer,
	`last_used_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `setup_links_org` ON `setup_links` (`org_id`);--> statement-breakpoint
CREATE INDEX `setup_links_expires_at` ON `setup_links` (`expires_at`);--> statement-breakpoint
ALTER TABLE `scim_tokens` ADD `setup_link_id` text;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `setup_link_id` text;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `domains` text;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `tested_at` integer;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `last_test` text;--> statement-breakpoint
ALTER TABLE `sso_requests` ADD `test` integer DEFAULT false NOT NULL;