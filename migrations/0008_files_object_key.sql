ALTER TABLE `files` ADD `object_key` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `files` ADD `image_width` integer;--> statement-breakpoint
ALTER TABLE `files` ADD `image_height` integer;--> statement-breakpoint
-- Files stored before versioned keys live at <bucket_id>/<id>.
UPDATE `files` SET `object_key` = `bucket_id` || '/' || `id` WHERE `object_key` = '';
