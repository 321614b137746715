ALTER TABLE `security_keys` ADD `upgrade_session_id` text;--> statement-breakpoint
ALTER TABLE `security_keys` ADD `user_verified_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `security_keys_upgrade_session_id_unique` ON `security_keys` (`upgrade_session_id`);