CREATE TABLE `oauth2_clients` (
	`client_id` text PRIMARY KEY NOT NULL,
	`secret_hash` text,
	`client_name` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`scopes` text NOT NULL,
	`grant_types` text NOT NULL,
	`token_endpoint_auth_method` text NOT NULL,
	`access_token_lifetime` integer NOT NULL,
	`refresh_token_lifetime` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
