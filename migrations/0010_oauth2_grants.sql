CREATE TABLE `oauth2_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`request_id` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text,
	`nonce` text,
	`scopes` text NOT NULL,
	`auth_time` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`grant_id` text,
	FOREIGN KEY (`client_id`) REFERENCES `oauth2_clients`(`client_id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_codes_request_id_unique` ON `oauth2_codes` (`request_id`);--> statement-breakpoint
CREATE INDEX `oauth2_codes_expires_at` ON `oauth2_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `oauth2_consents` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`scopes` text NOT NULL,
	`granted_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `oauth2_clients`(`client_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth2_consents_client_id` ON `oauth2_consents` (`client_id`);--> statement-breakpoint
CREATE TABLE `oauth2_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scopes` text NOT NULL,
	`auth_time` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `oauth2_clients`(`client_id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth2_grants_user_id` ON `oauth2_grants` (`user_id`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_client_id` ON `oauth2_grants` (`client_id`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_expires_at` ON `oauth2_grants` (`expires_at`);--> statement-breakpoint
CREATE TABLE `oauth2_refresh_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth2_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth2_refresh_tokens_grant_id` ON `oauth2_refresh_tokens` (`grant_id`);--> statement-breakpoint
CREATE INDEX `oauth2_refresh_tokens_expires_at` ON `oauth2_refresh_tokens` (`expires_at`);