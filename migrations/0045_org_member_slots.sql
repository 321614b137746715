-- The slot of each member (src/db/tables/orgs.ts `user_slot`). SQLite has no SHA-256: rows from before stay NULL
-- ("unknown: read after") until the orgs feature's daily sweep fills them (src/orgs/housekeeping.ts), or the
-- member's next org switch does.
ALTER TABLE `org_members` ADD `user_slot` integer;--> statement-breakpoint
CREATE INDEX `org_members_slot` ON `org_members` (`org_id`,`user_slot`);