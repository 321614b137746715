-- Old systems' access tokens after the cut-over (contract supabase.md §6): when a user's credentials last changed
-- here, so an old token issued before that change is refused (src/http/imported-tokens.ts). The cut-over itself is a
-- service_settings row (import-cut-over:<system>).
ALTER TABLE `users` ADD `credentials_changed_at` integer;