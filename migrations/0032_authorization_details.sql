ALTER TABLE `oauth2_clients` ADD `authorization_details_types` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `authorization_details` text;--> statement-breakpoint
ALTER TABLE `oauth2_grants` ADD `authorization_details` text;--> statement-breakpoint
-- By hand (drizzle's schema does not declare it): discovery's authorization_details_types_supported reads only the
-- clients that have types (src/oauth2/authorization-details/supported-types.ts), whatever the number of clients.
CREATE INDEX `oauth2_clients_with_detail_types` ON `oauth2_clients` (`client_id`) WHERE `authorization_details_types` <> '[]';
