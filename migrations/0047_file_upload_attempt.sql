-- The upload that holds a file's record while it is not visible (src/db/tables/storage.ts `upload_attempt`): each
-- statement of an upload names its own record by it, not by the file id alone.
ALTER TABLE `files` ADD `upload_attempt` text;
