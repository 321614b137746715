CREATE TABLE `import_ledger` (
	`kind` text NOT NULL,
	`id` text NOT NULL,
	`fingerprint` text NOT NULL,
	`row_updated_at` integer,
	`owner` text,
	`parts` text,
	`imported_at` integer NOT NULL,
	PRIMARY KEY(`kind`, `id`)
);
--> statement-breakpoint
CREATE INDEX `import_ledger_owner` ON `import_ledger` (`owner`);