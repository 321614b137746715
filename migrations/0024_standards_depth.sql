-- Standards depth (contract auth.md §12): clients' DPoP, PAR, logout and key settings; what a code hands its grant
-- (acr, amr, the browser session `sid`, the DPoP key's thumbprint); a session's DPoP key; pushed authorization
-- requests (home database).
CREATE TABLE `oauth2_pushed_requests` (
	`request_uri_hash` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`params` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `oauth2_pushed_requests_expires_at` ON `oauth2_pushed_requests` (`expires_at`);--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `acr` text;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `amr` text;--> statement-breakpoint
ALTER TABLE `device_authorizations` ADD `sid` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `dpop_bound_access_tokens` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `require_pushed_authorization_requests` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `post_logout_redirect_uris` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `backchannel_logout_uri` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `backchannel_logout_session_required` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `jwks` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `jwks_uri` text;--> statement-breakpoint
ALTER TABLE `oauth2_clients` ADD `trusted_issuers` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `acr` text;--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `amr` text;--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `sid` text;--> statement-breakpoint
ALTER TABLE `oauth2_codes` ADD `dpop_jkt` text;--> statement-breakpoint
ALTER TABLE `oauth2_grants` ADD `acr` text;--> statement-breakpoint
ALTER TABLE `oauth2_grants` ADD `amr` text;--> statement-breakpoint
ALTER TABLE `oauth2_grants` ADD `sid` text;--> statement-breakpoint
ALTER TABLE `oauth2_grants` ADD `dpop_jkt` text;--> statement-breakpoint
CREATE INDEX `oauth2_grants_sid` ON `oauth2_grants` (`sid`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `dpop_jkt` text;