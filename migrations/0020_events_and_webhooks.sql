CREATE TABLE `dead_letters` (
	`id` text PRIMARY KEY NOT NULL,
	`queue` text NOT NULL,
	`body` text NOT NULL,
	`attempts` integer NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `dead_letters_at` ON `dead_letters` (`at`);--> statement-breakpoint
CREATE TABLE `event_mutes` (
	`subject` text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `event_outbox` (
	`position` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text DEFAULT ('evt_' || lower(hex(randomblob(16)))) NOT NULL,
	`type` text NOT NULL,
	`subject` text NOT NULL,
	`sequence` integer NOT NULL,
	`at` integer DEFAULT (CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)) NOT NULL,
	`data` text NOT NULL,
	`claimed_until` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_outbox_id_unique` ON `event_outbox` (`id`);--> statement-breakpoint
CREATE TABLE `event_sequences` (
	`subject` text PRIMARY KEY NOT NULL,
	`last` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_status` integer,
	`last_response` text,
	`last_attempt_at` integer,
	`delivered_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_endpoint_event` ON `webhook_deliveries` (`endpoint_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_created` ON `webhook_deliveries` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text,
	`secret_sealed` text NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `sessions` ADD `method` text;--> statement-breakpoint
ALTER TABLE `users` ADD `password_changed_at` integer;
--> statement-breakpoint
-- The event stream (contract move-in §5, docs/events.md): the database writes each change's event itself, in the
-- statement that makes the change, whichever code path made it. Snapshots never carry secrets (no password hash,
-- TOTP secret, token or ticket). A subject in event_mutes (the Nhost import's batches) writes none.
CREATE VIEW `event_user_snapshots` AS SELECT u.id AS id, json_object(
  'id', u.id,
  'createdAt', strftime('%Y-%m-%dT%H:%M:%fZ', u.created_at / 1000.0, 'unixepoch'),
  'updatedAt', strftime('%Y-%m-%dT%H:%M:%fZ', u.updated_at / 1000.0, 'unixepoch'),
  'lastSeen', CASE WHEN u.last_seen IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%fZ', u.last_seen / 1000.0, 'unixepoch') END,
  'disabled', json(CASE WHEN u.disabled THEN 'true' ELSE 'false' END),
  'displayName', u.display_name,
  'avatarUrl', u.avatar_url,
  'locale', u.locale,
  'email', u.email,
  'emailVerified', json(CASE WHEN u.email_verified THEN 'true' ELSE 'false' END),
  'newEmail', u.new_email,
  'phoneNumber', u.phone_number,
  'phoneNumberVerified', json(CASE WHEN u.phone_number_verified THEN 'true' ELSE 'false' END),
  'defaultRole', u.default_role,
  'roles', json(u.roles),
  'isAnonymous', json(CASE WHEN u.is_anonymous THEN 'true' ELSE 'false' END),
  'activeMfaType', u.active_mfa_type,
  'metadata', json(u.metadata),
  'providers', json((SELECT json_group_array(json_object(
    'id', p.id, 'provider', p.provider, 'providerUserId', p.provider_user_id,
    'createdAt', strftime('%Y-%m-%dT%H:%M:%fZ', p.created_at / 1000.0, 'unixepoch'), 'updatedAt', strftime('%Y-%m-%dT%H:%M:%fZ', p.updated_at / 1000.0, 'unixepoch')))
    FROM user_providers p WHERE p.user_id = u.id))
) AS snapshot FROM users u;
--> statement-breakpoint
CREATE VIEW `event_file_snapshots` AS SELECT f.id AS id, json_object(
  'id', f.id,
  'bucketId', f.bucket_id,
  'name', f.name,
  'size', f.size,
  'mimeType', f.mime_type,
  'etag', f.etag,
  'isUploaded', json(CASE WHEN f.is_uploaded THEN 'true' ELSE 'false' END),
  'uploadedByUserId', f.uploaded_by_user_id,
  'metadata', json(COALESCE(f.metadata, 'null')),
  'createdAt', strftime('%Y-%m-%dT%H:%M:%fZ', f.created_at / 1000.0, 'unixepoch'),
  'updatedAt', strftime('%Y-%m-%dT%H:%M:%fZ', f.updated_at / 1000.0, 'unixepoch')
) AS snapshot FROM files f;
--> statement-breakpoint
CREATE TRIGGER `events_user_created` AFTER INSERT ON `users` FOR EACH ROW
WHEN NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = NEW.id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (NEW.id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = NEW.id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'user.created', s.subject, s.last, json_object('user', json(v.snapshot))
    FROM event_sequences s, event_user_snapshots v WHERE s.subject = NEW.id AND v.id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_user_updated` AFTER UPDATE ON `users` FOR EACH ROW
WHEN (OLD.display_name IS NOT NEW.display_name OR OLD.avatar_url IS NOT NEW.avatar_url OR OLD.locale IS NOT NEW.locale OR OLD.email IS NOT NEW.email OR OLD.new_email IS NOT NEW.new_email OR OLD.phone_number IS NOT NEW.phone_number OR OLD.phone_number_verified IS NOT NEW.phone_number_verified OR OLD.default_role IS NOT NEW.default_role OR OLD.roles IS NOT NEW.roles OR OLD.metadata IS NOT NEW.metadata OR OLD.disabled IS NOT NEW.disabled OR OLD.active_mfa_type IS NOT NEW.active_mfa_type OR OLD.is_anonymous IS NOT NEW.is_anonymous OR (OLD.email_verified = 1 AND NEW.email_verified = 0)) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = NEW.id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (NEW.id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = NEW.id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'user.updated', s.subject, s.last, json_object('user', json(v.snapshot))
    FROM event_sequences s, event_user_snapshots v WHERE s.subject = NEW.id AND v.id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_email_verified` AFTER UPDATE OF email_verified ON `users` FOR EACH ROW
WHEN (OLD.email_verified = 0 AND NEW.email_verified = 1) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = NEW.id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (NEW.id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = NEW.id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'email.verified', s.subject, s.last, json_object('user', json(v.snapshot))
    FROM event_sequences s, event_user_snapshots v WHERE s.subject = NEW.id AND v.id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_password_changed` AFTER UPDATE OF password_changed_at ON `users` FOR EACH ROW
WHEN (NEW.password_changed_at IS NOT NULL AND OLD.password_changed_at IS NOT NEW.password_changed_at) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = NEW.id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (NEW.id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = NEW.id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'password.changed', s.subject, s.last, json_object('user', json(v.snapshot))
    FROM event_sequences s, event_user_snapshots v WHERE s.subject = NEW.id AND v.id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_user_deleted` AFTER DELETE ON `users` FOR EACH ROW
WHEN NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = OLD.id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (OLD.id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = OLD.id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'user.deleted', s.subject, s.last, json_object('user', json_object('id', OLD.id, 'email', OLD.email, 'phoneNumber', OLD.phone_number, 'displayName', OLD.display_name))
    FROM event_sequences s WHERE s.subject = OLD.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_provider_linked` AFTER INSERT ON `user_providers` FOR EACH ROW
WHEN NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = NEW.user_id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (NEW.user_id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = NEW.user_id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'user.updated', s.subject, s.last, json_object('user', json(v.snapshot))
    FROM event_sequences s, event_user_snapshots v WHERE s.subject = NEW.user_id AND v.id = NEW.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_provider_unlinked` AFTER DELETE ON `user_providers` FOR EACH ROW
WHEN (EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id)) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = OLD.user_id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (OLD.user_id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = OLD.user_id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'user.updated', s.subject, s.last, json_object('user', json(v.snapshot))
    FROM event_sequences s, event_user_snapshots v WHERE s.subject = OLD.user_id AND v.id = OLD.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_session_created` AFTER INSERT ON `sessions` FOR EACH ROW
WHEN NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = NEW.user_id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (NEW.user_id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = NEW.user_id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'session.created', s.subject, s.last, json_object('session', json_object('id', NEW.id, 'userId', NEW.user_id, 'method', NEW.method, 'userAgent', NEW.user_agent, 'createdAt', strftime('%Y-%m-%dT%H:%M:%fZ', NEW.created_at / 1000.0, 'unixepoch'), 'expiresAt', strftime('%Y-%m-%dT%H:%M:%fZ', NEW.expires_at / 1000.0, 'unixepoch')))
    FROM event_sequences s WHERE s.subject = NEW.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_session_revoked` AFTER DELETE ON `sessions` FOR EACH ROW
WHEN (OLD.expires_at > CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER) AND EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id)) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = OLD.user_id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (OLD.user_id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = OLD.user_id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'session.revoked', s.subject, s.last, json_object('session', json_object('id', OLD.id, 'userId', OLD.user_id, 'method', OLD.method))
    FROM event_sequences s WHERE s.subject = OLD.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_file_uploaded_new` AFTER INSERT ON `files` FOR EACH ROW
WHEN (NEW.is_uploaded = 1) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id))
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id), 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id);
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'file.uploaded', s.subject, s.last, json_object('file', json(v.snapshot))
    FROM event_sequences s, event_file_snapshots v WHERE s.subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id) AND v.id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_file_uploaded` AFTER UPDATE ON `files` FOR EACH ROW
WHEN (NEW.is_uploaded = 1 AND (OLD.is_uploaded = 0 OR OLD.etag IS NOT NEW.etag OR OLD.object_key IS NOT NEW.object_key)) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id))
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id), 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id);
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'file.uploaded', s.subject, s.last, json_object('file', json(v.snapshot))
    FROM event_sequences s, event_file_snapshots v WHERE s.subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id) AND v.id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_file_updated` AFTER UPDATE ON `files` FOR EACH ROW
WHEN (NEW.is_uploaded = 1 AND OLD.is_uploaded = 1 AND OLD.etag IS NEW.etag AND OLD.object_key IS NEW.object_key AND (OLD.name IS NOT NEW.name OR OLD.mime_type IS NOT NEW.mime_type OR OLD.metadata IS NOT NEW.metadata OR OLD.bucket_id IS NOT NEW.bucket_id)) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id))
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id), 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id);
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'file.updated', s.subject, s.last, json_object('file', json(v.snapshot))
    FROM event_sequences s, event_file_snapshots v WHERE s.subject = COALESCE(NEW.uploaded_by_user_id, 'file:' || NEW.id) AND v.id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `events_file_deleted` AFTER DELETE ON `files` FOR EACH ROW
WHEN (OLD.is_uploaded = 1) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = COALESCE(OLD.uploaded_by_user_id, 'file:' || OLD.id))
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (COALESCE(OLD.uploaded_by_user_id, 'file:' || OLD.id), 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = COALESCE(OLD.uploaded_by_user_id, 'file:' || OLD.id);
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'file.deleted', s.subject, s.last, json_object('file', json_object('id', OLD.id, 'bucketId', OLD.bucket_id, 'name', OLD.name, 'uploadedByUserId', OLD.uploaded_by_user_id))
    FROM event_sequences s WHERE s.subject = COALESCE(OLD.uploaded_by_user_id, 'file:' || OLD.id);
END;
