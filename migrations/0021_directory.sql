CREATE TABLE `directory` (
	`key` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`user_id` text NOT NULL,
	`claimed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `directory_user` ON `directory` (`user_id`);