-- Which org a session kept in another shard acts in, by its token's locator (src/db/tables/orgs.ts
-- `org_session_hints`): a plain refresh of such a session reads its membership beside the rotation. Only a hint;
-- filled by refreshes after their answer, so an empty table costs each such session one refresh in two waves.
CREATE TABLE `org_session_hints` (
	`session_id` text PRIMARY KEY NOT NULL,
	`locator` text NOT NULL,
	`user_id` text NOT NULL,
	`org_id` text NOT NULL,
	`written_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `org_session_hints_locator` ON `org_session_hints` (`locator`);--> statement-breakpoint
CREATE INDEX `org_session_hints_written_at` ON `org_session_hints` (`written_at`);