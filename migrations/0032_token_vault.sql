CREATE TABLE `vault_connections` (
	`user_id` text NOT NULL,
	`provider` text NOT NULL,
	`provider_user_id` text NOT NULL,
	`provider_email` text,
	`sealed` text NOT NULL,
	`scopes` text NOT NULL,
	`expires_at` integer,
	`version` integer DEFAULT 1 NOT NULL,
	`refreshing_until` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `provider`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `vault_consents` (
	`user_id` text NOT NULL,
	`provider` text NOT NULL,
	`client_id` text NOT NULL,
	`granted_at` integer NOT NULL,
	`last_used_at` integer,
	`uses` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`user_id`, `provider`, `client_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `vault_consents_client_id` ON `vault_consents` (`client_id`);--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `vault_providers` text DEFAULT '[]' NOT NULL;