-- compare's baseline: the last n runs of one branch on one testbed, newest first.
CREATE INDEX runs_by_repo_testbed_branch_time ON runs (repository_id, testbed_id, branch_id, created_at DESC, id DESC);
