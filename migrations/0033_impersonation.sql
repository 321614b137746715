CREATE TABLE `impersonations` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`actor` text NOT NULL,
	`caller` text,
	`reason` text NOT NULL,
	`started_at` integer NOT NULL,
	`ends_at` integer NOT NULL,
	`ended_at` integer,
	`ended_how` text,
	`landing_hash` text,
	`landing_sealed` text,
	`landing_expires_at` integer
);
--> statement-breakpoint
CREATE INDEX `impersonations_user` ON `impersonations` (`user_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `impersonations_running` ON `impersonations` (`ended_at`,`ends_at`);--> statement-breakpoint
CREATE INDEX `impersonations_landing` ON `impersonations` (`landing_hash`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `actor` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `ends_at` integer;