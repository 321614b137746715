CREATE TABLE `authz_documents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`text` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `authz_documents_kind` ON `authz_documents` (`kind`,`id`);--> statement-breakpoint
CREATE TABLE `authz_relationships` (
	`resource_type` text NOT NULL,
	`resource_id` text NOT NULL,
	`relation` text NOT NULL,
	`subject_type` text NOT NULL,
	`subject_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`resource_type`, `resource_id`, `relation`, `subject_type`, `subject_id`)
);
--> statement-breakpoint
CREATE INDEX `authz_relationships_subject` ON `authz_relationships` (`subject_type`,`subject_id`);--> statement-breakpoint
-- An organization's relationships go with it, in the statement that deletes it (contract platform.md §2): as the
-- subject `Org::"<id>"` or `OrgRole::"<id>/<role>"`, or as the resource `Org::"<id>"`. Organizations and
-- relationships both live in the home database. (A user's go through the event stream: users live in shards.)
CREATE TRIGGER `authz_relationships_org_deleted` AFTER DELETE ON `organizations` FOR EACH ROW
BEGIN
  DELETE FROM authz_relationships
  WHERE (subject_type = 'Org' AND subject_id = OLD.id)
     OR (subject_type = 'OrgRole' AND substr(subject_id, 1, length(OLD.id) + 1) = OLD.id || '/')
     OR (resource_type = 'Org' AND resource_id = OLD.id)
     OR (resource_type = 'OrgRole' AND substr(resource_id, 1, length(OLD.id) + 1) = OLD.id || '/');
END;
