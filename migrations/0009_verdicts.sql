-- A run's validity and the verdict it was judged with when it arrived (shared/verdict.ts, with the
-- rules stored in its document): the badge, the trend points and the pages read it, so they say
-- what the PR comment said. An invalid run never enters a base history (runs.valid = 0).
ALTER TABLE runs ADD COLUMN valid INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN verdict_json TEXT;
ALTER TABLE points ADD COLUMN verdict TEXT;
-- Samples in groups (a request's ITL gaps together): their sizes, JSON, or NULL (one value each).
ALTER TABLE run_samples ADD COLUMN sizes_json TEXT;
