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
