ALTER TABLE `audit_events` ADD `actor` text DEFAULT 'user' NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `actor_name` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `outcome` text DEFAULT 'success' NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `reason` text;--> statement-breakpoint
CREATE INDEX `audit_events_actor` ON `audit_events` (`actor`,`at`,`id`);--> statement-breakpoint
-- Events recorded before actors were: an admin action was the admin's, or the Worker's that called AuthAdmin (its
-- detail named the caller); the rest were a person's own (issue 46, docs/decisions.md).
UPDATE `audit_events` SET `actor` = 'admin' WHERE `type` LIKE 'admin.%' AND json_extract(`detail`, '$.via') IS NOT 'service-binding';--> statement-breakpoint
UPDATE `audit_events` SET `actor` = 'worker', `actor_name` = json_extract(`detail`, '$.caller') WHERE `type` LIKE 'admin.%' AND json_extract(`detail`, '$.via') = 'service-binding';--> statement-breakpoint
UPDATE `audit_events` SET `outcome` = 'failure' WHERE `type` IN ('signin.failure', 'signin.failure.repeated', 'refresh.replay', 'signin.locked', 'admin.console.sign-in-failed') OR (`type` = 'hook.called' AND json_extract(`detail`, '$.outcome') IN ('unreachable', 'timeout', 'bad-status', 'malformed'));--> statement-breakpoint
UPDATE `audit_events` SET `reason` = coalesce(json_extract(`detail`, '$.error'), json_extract(`detail`, '$.outcome'), json_extract(`detail`, '$.method'), `type`);
