CREATE TABLE `authorization_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`code_challenge` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `authorization_codes_expires_at` ON `authorization_codes` (`expires_at`);--> statement-breakpoint
ALTER TABLE `tickets` ADD `code_challenge` text;