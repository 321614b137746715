-- Issue 44: the import ledger records the system each row was imported from (nhost, supabase, auth0, firebase, clerk,
-- cognito, csv), so a delta run lists and removes only its own system's users (docs/decisions.md, "Issue 44: one
-- ledger, many systems"). Every row before this was written by import-nhost.
ALTER TABLE `import_ledger` ADD `system` text DEFAULT 'nhost' NOT NULL;--> statement-breakpoint
CREATE INDEX `import_ledger_system` ON `import_ledger` (`system`,`kind`,`id`);