-- The directory's old layout (docs/scaling.md, "A deployment that ran several shards before"; src/db/slot-map.ts).
-- Before issue 48, every directory key lived in the home database; since, each key lives in the shard of its slot.
-- A database whose directory already holds rows here ran several shards under the old layout: a marker keeps its
-- keys at home until they are re-keyed. A fresh database, and a one-shard deployment (whose directory is never
-- written), get no marker. Every shard gets every migration; only the home database's marker is read.
INSERT INTO `service_settings` (`key`, `value`, `updated_at`)
SELECT 'directory.layout', '"home"', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
WHERE EXISTS (SELECT 1 FROM `directory`)
ON CONFLICT DO NOTHING;
