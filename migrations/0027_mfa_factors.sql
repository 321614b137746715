-- The second factors as a list (contract supabase.md §2, "Factors"; src/auth/mfa/factors.ts), and the Supabase face's
-- first-factor sessions (GoTrue's aal1) that the Nhost face does not refresh, and timed bans (GoTrue's
-- ban_duration), lifted by the every-minute cron, and soft deletions (GoTrue's should_soft_delete).
CREATE TABLE `mfa_factors` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`factor_type` text NOT NULL,
	`friendly_name` text,
	`status` text DEFAULT 'unverified' NOT NULL,
	`phone` text,
	`secret` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mfa_factors_user_id` ON `mfa_factors` (`user_id`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `second_factor_pending` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `banned_until` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `deleted_at` integer;--> statement-breakpoint
CREATE INDEX `users_banned_until` ON `users` (`banned_until`) WHERE banned_until IS NOT NULL;--> statement-breakpoint
-- Today's single TOTP secret becomes the user's TOTP factor, with a new uuid v4 (the secret stays on the user's row,
-- where the Nhost face reads it); a secret written later without a factor (an import) is named at its first listing.
INSERT INTO `mfa_factors` (`id`, `user_id`, `factor_type`, `friendly_name`, `status`, `secret`, `created_at`, `updated_at`)
SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' ||
  substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
  `id`, 'totp', NULL, CASE WHEN `active_mfa_type` = 'totp' THEN 'verified' ELSE 'unverified' END, `totp_secret`,
  coalesce(`totp_enabled_at`, `updated_at`), coalesce(`totp_enabled_at`, `updated_at`)
FROM `users` WHERE `totp_secret` IS NOT NULL;