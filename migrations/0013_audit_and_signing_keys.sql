CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`type` text NOT NULL,
	`user_id` text,
	`ip` text,
	`user_agent` text,
	`detail` text DEFAULT '{}' NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_events_at` ON `audit_events` (`at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_user` ON `audit_events` (`user_id`,`at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_type` ON `audit_events` (`type`,`at`,`id`);--> statement-breakpoint
CREATE TABLE `signing_keys` (
	`kid` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL,
	`status` text NOT NULL,
	`private_jwk_sealed` text NOT NULL,
	`public_jwk` text NOT NULL
);
