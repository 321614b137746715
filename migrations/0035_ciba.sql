ALTER TABLE `device_authorizations` ADD `kind` text DEFAULT 'device' NOT NULL;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `subject` text;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `binding_message` text;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `acr_values` text;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `org_id` text;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `ping_sealed` text;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `authorization_details` text;--> statement-breakpoint
CREATE INDEX `device_authorizations_subject` ON `device_authorizations` (`subject`,`status`);--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `backchannel_token_delivery_mode` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `backchannel_client_notification_endpoint` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `backchannel_organization` text;