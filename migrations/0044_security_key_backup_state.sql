ALTER TABLE `security_keys` ADD `backup_eligible` integer;--> statement-breakpoint
ALTER TABLE `security_keys` ADD `backup_state` integer;