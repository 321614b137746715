CREATE TABLE `buckets` (
	`id` text PRIMARY KEY NOT NULL,
	`min_upload_file_size` integer DEFAULT 1 NOT NULL,
	`max_upload_file_size` integer DEFAULT 50000000 NOT NULL,
	`cache_control` text DEFAULT 'max-age=3600' NOT NULL,
	`presigned_urls_enabled` integer DEFAULT true NOT NULL,
	`download_expiration` integer DEFAULT 30 NOT NULL,
	`allowed_mime_types` text DEFAULT '[]' NOT NULL,
	`rules` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`bucket_id` text NOT NULL,
	`name` text NOT NULL,
	`size` integer NOT NULL,
	`mime_type` text NOT NULL,
	`etag` text NOT NULL,
	`is_uploaded` integer DEFAULT false NOT NULL,
	`uploaded_by_user_id` text,
	`metadata` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`bucket_id`) REFERENCES `buckets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `files_bucket_id` ON `files` (`bucket_id`);