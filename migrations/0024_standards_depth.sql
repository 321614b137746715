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
ALTER TABLE `sessions` ADD `dpop_jkt` text;--> statement-breakpoint
-- A session's `session.revoked` event names the OAuth2 clients holding a grant signed in from it (`oauth2Clients`),
-- read as the row goes: back-channel logout (src/oauth2/logout/) tells them even when the same request ends the grants
-- right after (a password change, a disabled or deleted user), before the event is consumed.
DROP TRIGGER IF EXISTS `events_session_revoked`;--> statement-breakpoint
CREATE TRIGGER `events_session_revoked` AFTER DELETE ON `sessions` FOR EACH ROW
WHEN (OLD.expires_at > CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER) AND EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id)) AND NOT EXISTS (SELECT 1 FROM event_mutes WHERE subject = OLD.user_id)
BEGIN
  INSERT OR IGNORE INTO event_sequences (subject, last) VALUES (OLD.user_id, 0);
  UPDATE event_sequences SET last = last + 1 WHERE subject = OLD.user_id;
  INSERT INTO event_outbox (type, subject, sequence, data)
    SELECT 'session.revoked', s.subject, s.last, json_object('session', json_object('id', OLD.id, 'userId', OLD.user_id, 'method', OLD.method, 'oauth2Clients', json((SELECT json_group_array(c.client_id) FROM (SELECT DISTINCT client_id FROM oauth2_grants WHERE sid = OLD.id) AS c))))
    FROM event_sequences s WHERE s.subject = OLD.user_id;
END;
