ALTER TABLE `oauth2_clients` ADD `fedcm_origins` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `policy_uri` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `tos_uri` text;