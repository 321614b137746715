CREATE TABLE `device_authorizations` (
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
	FOREIGN KEY (`client_id`) REFERENCES `oauth2_clients`(`client_id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_authorizations_user_code_hash_unique` ON `device_authorizations` (`user_code_hash`);--> statement-breakpoint
CREATE INDEX `device_authorizations_expires_at` ON `device_authorizations` (`expires_at`);--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `application_type` text DEFAULT 'web' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `registration` text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `registered_by_user_id` text REFERENCES users(id) ON DELETE cascade;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `registration_token_hash` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `client_uri` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `logo_uri` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `contacts` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `software_id` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `software_version` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `resources` text;--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `resources` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_grants` ADD `resources` text DEFAULT '[]' NOT NULL;