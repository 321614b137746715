-- GoTrue's app_metadata beyond provider/providers (contract supabase.md §2, "One account, two faces"): set only by the
-- Supabase face's service role; null until then.
ALTER TABLE `users` ADD `app_metadata` text;