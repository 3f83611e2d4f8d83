-- One CI attempt is one run: an upload is identified by its repository, workflow run id, attempt,
-- kind, testbed and shard. The same body again is the stored run (idempotent, by public_id); a
-- different body with the same identity is refused (409 run_conflict), so no baseline counts one
-- attempt twice. Kept in a table of its own, so history stored before it (which may hold such
-- doubles) is left as it is rather than failing the migration.
CREATE TABLE run_identities (
  repository_id INTEGER NOT NULL REFERENCES repositories(id),
  identity TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  PRIMARY KEY (repository_id, identity)
);
