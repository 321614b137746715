-- The Supabase face's storage (contract supabase.md §3; src/faces/supabase/storage/): objects addressed by bucket and
-- path (`files.path`, unique per bucket; null for the Nhost API's uploads), and resumable (TUS) uploads in progress.
CREATE TABLE `resumable_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`path` text NOT NULL,
	`owner_id` text,
	`upsert` integer NOT NULL,
	`length` integer NOT NULL,
	`offset` integer NOT NULL,
	`part_size` integer,
	`completed` integer DEFAULT false NOT NULL,
	`object_key` text NOT NULL,
	`r2_upload_id` text NOT NULL,
	`parts` text NOT NULL,
	`md5` text NOT NULL,
	`content_type` text NOT NULL,
	`metadata` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `files` ADD `path` text;--> statement-breakpoint
CREATE UNIQUE INDEX `files_bucket_path` ON `files` (`bucket_id`,`path`);