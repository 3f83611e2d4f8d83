-- tokenbench results service, schema 1.
-- repository -> branch -> testbed -> benchmark -> measure -> points (as Bencher models it).

CREATE TABLE repositories (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,               -- "owner/name"
  created_at TEXT NOT NULL
);

CREATE TABLE branches (
  id INTEGER PRIMARY KEY,
  repository_id INTEGER NOT NULL REFERENCES repositories(id),
  name TEXT NOT NULL,
  UNIQUE (repository_id, name)
);

CREATE TABLE testbeds (
  id INTEGER PRIMARY KEY,
  repository_id INTEGER NOT NULL REFERENCES repositories(id),
  fingerprint TEXT NOT NULL,               -- sha256 of the canonical testbed spec, 16 hex
  name TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  UNIQUE (repository_id, fingerprint)
);
CREATE INDEX testbeds_by_name ON testbeds (repository_id, name);

CREATE TABLE benchmarks (
  id INTEGER PRIMARY KEY,
  repository_id INTEGER NOT NULL REFERENCES repositories(id),
  name TEXT NOT NULL,                      -- "closed c=8", "open 4 req/s", "profile prefill 2048"
  UNIQUE (repository_id, name)
);

CREATE TABLE measures (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,               -- "ttft_p50_ms"
  unit TEXT NOT NULL,
  direction TEXT NOT NULL CHECK (direction IN ('lower', 'higher'))
);

CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,          -- 16 hex of the document hash: re-sending a run finds it
  repository_id INTEGER NOT NULL REFERENCES repositories(id),
  branch_id INTEGER REFERENCES branches(id),
  testbed_id INTEGER NOT NULL REFERENCES testbeds(id),
  kind TEXT NOT NULL,
  commit_sha TEXT,
  pr_number INTEGER,
  workflow_run_id TEXT,
  run_attempt INTEGER,
  created_at TEXT NOT NULL,                -- when the run was measured (document)
  ingested_at TEXT NOT NULL,
  document_json TEXT NOT NULL              -- schema v1, per-request records stripped
);
CREATE INDEX runs_by_repo_time ON runs (repository_id, created_at DESC, id DESC);
CREATE INDEX runs_by_repo_branch_time ON runs (repository_id, branch_id, created_at DESC, id DESC);
CREATE INDEX runs_by_repo_testbed_time ON runs (repository_id, testbed_id, created_at DESC, id DESC);
CREATE INDEX runs_by_repo_sha ON runs (repository_id, commit_sha);

CREATE TABLE points (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  repository_id INTEGER NOT NULL,
  branch_id INTEGER,
  testbed_id INTEGER NOT NULL,
  benchmark_id INTEGER NOT NULL REFERENCES benchmarks(id),
  measure_id INTEGER NOT NULL REFERENCES measures(id),
  level REAL,
  value REAL NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, benchmark_id, measure_id)
);
-- series, compare baseline and badges: one index range scan each
CREATE INDEX points_series ON points (repository_id, benchmark_id, measure_id, testbed_id, branch_id, created_at DESC);

CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY,
  repository_id INTEGER NOT NULL REFERENCES repositories(id),
  token_hash TEXT NOT NULL UNIQUE,         -- sha256 hex; the token itself is never stored
  label TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);

CREATE TABLE oidc_jti (
  jti TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL              -- unix seconds; rows past it may be deleted
);
CREATE INDEX oidc_jti_expiry ON oidc_jti (expires_at);

INSERT INTO measures (id, name, unit, direction) VALUES
  (1, 'ttft_p50_ms', 'ms', 'lower'),
  (2, 'ttft_p95_ms', 'ms', 'lower'),
  (3, 'ttft_p99_ms', 'ms', 'lower'),
  (4, 'itl_p50_ms', 'ms', 'lower'),
  (5, 'itl_p95_ms', 'ms', 'lower'),
  (6, 'tpot_p50_ms', 'ms', 'lower'),
  (7, 'e2e_p50_ms', 'ms', 'lower'),
  (8, 'e2e_p95_ms', 'ms', 'lower'),
  (9, 'output_tok_s', 'tok/s', 'higher'),
  (10, 'total_tok_s', 'tok/s', 'higher'),
  (11, 'req_s', 'req/s', 'higher'),
  (12, 'goodput_req_s', 'req/s', 'higher'),
  (13, 'slo_pass_pct', '%', 'higher'),
  (14, 'error_rate', 'ratio', 'lower'),
  (15, 'decode_tps', 'tok/s', 'higher'),
  (16, 'effective_prefill_tps', 'tok/s', 'higher'),
  (17, 'ttft_ratio', 'ratio', 'lower');
