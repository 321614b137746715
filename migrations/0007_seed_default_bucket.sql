-- The `default` bucket always exists (storage contract §1): uploads need a signed-in user, and each file is readable,
-- replaceable and deletable by its uploader (§4). Times are Unix milliseconds (2026-11-22T00:00:00Z).
INSERT INTO `buckets` (`id`, `min_upload_file_size`, `max_upload_file_size`, `cache_control`, `presigned_urls_enabled`,
  `download_expiration`, `allowed_mime_types`, `rules`, `created_at`, `updated_at`)
VALUES ('default', 1, 50000000, 'max-age=3600', 1, 30, '[]',
  '{"upload":"authenticated","read":"owner","update":"owner","delete":"owner"}', 1795305600000, 1795305600000);
