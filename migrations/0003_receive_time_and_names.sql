-- History is ordered by the service's own receive time: a document's created_at is what the
-- uploader says and may be anything (year 9999 would sort first for ever). The document's time
-- is kept as data in measured_at; created_at becomes the receive time, for old rows too.
ALTER TABLE runs ADD COLUMN measured_at TEXT;
UPDATE runs SET measured_at = created_at, created_at = ingested_at;
UPDATE points SET created_at = (SELECT r.ingested_at FROM runs r WHERE r.id = points.run_id);

-- Repository names compare case-insensitively, as on GitHub: stored lower-case. (A name whose
-- lower-case form already exists keeps its spelling; the service no longer creates such pairs.)
UPDATE OR IGNORE repositories SET name = lower(name);
