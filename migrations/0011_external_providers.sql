CREATE TABLE `provider_requests` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`code_verifier_sealed` text,
	`nonce` text,
	`redirect_to` text NOT NULL,
	`options` text NOT NULL,
	`connect_user_id` text,
	`app_state` text,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `provider_requests_expires_at` ON `provider_requests` (`expires_at`);--> statement-breakpoint
CREATE TABLE `provider_token_handoffs` (
	`user_id` text NOT NULL,
	`provider` text NOT NULL,
	`sealed` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `provider`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `provider_token_handoffs_expires_at` ON `provider_token_handoffs` (`expires_at`);--> statement-breakpoint
CREATE TABLE `user_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`provider` text NOT NULL,
	`provider_user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `user_providers_identity` ON `user_providers` (`provider`,`provider_user_id`);--> statement-breakpoint
CREATE INDEX `user_providers_user_id` ON `user_providers` (`user_id`);