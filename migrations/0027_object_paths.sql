ALTER TABLE `files` ADD `path` text;--> statement-breakpoint
CREATE UNIQUE INDEX `files_bucket_path` ON `files` (`bucket_id`,`path`);