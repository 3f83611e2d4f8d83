-- Per-request samples behind a run's sampled percentiles (at most 1,000 per level and measure,
-- shared/samples.ts): the stored document keeps no records, and the bootstrap needs them to give
-- the same verdict in the service as on the files.
CREATE TABLE run_samples (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  level REAL NOT NULL,
  measure TEXT NOT NULL,
  values_json TEXT NOT NULL,               -- JSON array of numbers, in the order measured
  PRIMARY KEY (run_id, level, measure)
);
