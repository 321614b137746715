-- The RFC 8707 resources a remembered consent allowed (src/db/tables/oauth2.ts `oauth2_consents.resources`): a request
-- naming a resource not in it is asked about again. Rows from before hold none: they still cover a request naming no
-- resource (the client itself is the audience), never a resource the person was not shown.
ALTER TABLE `oauth2_consents` ADD `resources` text DEFAULT '[]' NOT NULL;
