/** SQL text shared by the service and its benchmark (EXPLAIN QUERY PLAN). No bindings here. */

/** The series query (also used by bench/service.ts for EXPLAIN QUERY PLAN). */
export function seriesSql(testbedGiven: boolean): string {
  const testbedSql = testbedGiven
    ? "(SELECT t.id FROM testbeds t WHERE t.repository_id = repo.id AND (t.fingerprint = ? OR t.name = ?) LIMIT 1)"
    : "(SELECT r2.testbed_id FROM runs r2 WHERE r2.repository_id = repo.id ORDER BY r2.created_at DESC LIMIT 1)";
  return `WITH repo AS (SELECT id FROM repositories WHERE name = ?)
     SELECT pt.value, pt.created_at, r.public_id AS run_id, r.commit_sha, t.name AS testbed, b.name AS branch
     FROM repo
     JOIN points pt ON pt.repository_id = repo.id
       AND pt.benchmark_id = (SELECT id FROM benchmarks WHERE repository_id = repo.id AND name = ?)
       AND pt.measure_id = (SELECT id FROM measures WHERE name = ?)
       AND pt.testbed_id = ${testbedSql}
       AND pt.branch_id = (SELECT id FROM branches WHERE repository_id = repo.id AND name = ?)
       AND pt.created_at >= ?
     JOIN runs r ON r.id = pt.run_id
     JOIN testbeds t ON t.id = pt.testbed_id
     LEFT JOIN branches b ON b.id = pt.branch_id
     ORDER BY pt.created_at DESC
     LIMIT ?`;
}
