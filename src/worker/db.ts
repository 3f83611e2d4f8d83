/** The results service's SQL, in one place: reads of runs, series and base histories from D1, with the rows read counted. */
import type { RunSummary, SeriesPoint } from "../shared/api-types.ts";

/** Counts D1 rows read per request (exposed as `x-tokenbench-rows-read`). */
export class Db {
  rowsRead = 0;
  constructor(readonly d1: D1Database) {}

  async all<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    const r = await this.d1
      .prepare(sql)
      .bind(...params)
      .all<T>();
    this.rowsRead += r.meta?.rows_read ?? 0;
    return r.results ?? [];
  }

  async first<T>(sql: string, ...params: unknown[]): Promise<T | null> {
    const rows = await this.all<T>(sql, ...params);
    return rows[0] ?? null;
  }
}

/** A run as stored: the public summary's columns, the internal id and the flat testbed. */
export type RunRow = Omit<RunSummary, "id" | "testbed"> & {
  id: number;
  public_id: string;
  testbed: string;
  testbed_fingerprint: string;
};

const RUN_COLUMNS = `r.id, r.public_id, p.name AS repository, r.kind, b.name AS branch, t.name AS testbed,
  t.fingerprint AS testbed_fingerprint, r.commit_sha, r.pr_number, r.workflow_run_id, r.run_attempt,
  r.created_at, r.ingested_at, r.measured_at`;
const RUN_FROM = `runs r JOIN repositories p ON p.id = r.repository_id
  LEFT JOIN branches b ON b.id = r.branch_id JOIN testbeds t ON t.id = r.testbed_id`;

export async function findRun(db: Db, publicId: string): Promise<RunRow | null> {
  return db.first<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE r.public_id = ?`, publicId);
}

export interface ListRunsQuery {
  branch: string | null;
  testbed: string | null;
  sha: string | null;
  /** A pull request's runs only (0: any). */
  pr: number;
  limit: number;
  cursor: { createdAt: string; id: number } | null;
}

export async function listRuns(db: Db, repo: string, q: ListRunsQuery): Promise<RunRow[]> {
  const where = ["p.name = ?"];
  const params: unknown[] = [repo];
  if (q.branch !== null) {
    where.push("b.name = ?");
    params.push(q.branch);
  }
  if (q.testbed !== null) {
    where.push("(t.fingerprint = ? OR t.name = ?)");
    params.push(q.testbed, q.testbed);
  }
  if (q.sha !== null) {
    where.push("r.commit_sha LIKE ?");
    params.push(`${q.sha.replace(/[%_]/g, "")}%`);
  }
  if (q.pr > 0) {
    where.push("r.pr_number = ?");
    params.push(q.pr);
  }
  if (q.cursor !== null) {
    where.push("(r.created_at < ? OR (r.created_at = ? AND r.id < ?))");
    params.push(q.cursor.createdAt, q.cursor.createdAt, q.cursor.id);
  }
  params.push(q.limit);
  return db.all<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE ${where.join(" AND ")} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`,
    ...params,
  );
}

export async function runDocument(
  db: Db,
  publicId: string,
): Promise<(RunRow & { document_json: string; verdict_json: string | null }) | null> {
  return db.first(
    `SELECT ${RUN_COLUMNS}, r.document_json, r.verdict_json FROM ${RUN_FROM} WHERE r.public_id = ?`,
    publicId,
  );
}

export interface SeriesQuery {
  benchmark: string;
  measure: string;
  testbed: string | null;
  branch: string | null;
  limit: number;
  since: string | null;
}

export type { SeriesPoint };

/**
 * One query on the `points_series` index. Without `testbed` the testbed of the newest run of the
 * repository is used; without `branch`, "main".
 */
export async function series(db: Db, repo: string, q: SeriesQuery): Promise<SeriesPoint[]> {
  const params: unknown[] = [repo, q.benchmark, q.measure];
  if (q.testbed !== null) params.push(q.testbed, q.testbed);
  params.push(q.branch ?? "main", q.since ?? "", q.limit);
  return db.all<SeriesPoint>(seriesSql(q.testbed !== null), ...params);
}

export interface RunPoint {
  benchmark: string;
  measure: string;
  level: number | null;
  value: number;
}

export async function runPoints(db: Db, runId: number): Promise<RunPoint[]> {
  return db.all<RunPoint>(
    `SELECT bm.name AS benchmark, m.name AS measure, pt.level, pt.value
     FROM points pt JOIN benchmarks bm ON bm.id = pt.benchmark_id JOIN measures m ON m.id = pt.measure_id
     WHERE pt.run_id = ? ORDER BY pt.level, bm.name, m.id`,
    runId,
  );
}

/**
 * The base history of a run: the last `n` runs of `branch` on its testbed with a valid level
 * (`valid`, else those with none), received no later than `before` (the run itself excluded),
 * newest first, with their stored documents (each row judges with the runs whose own level is valid).
 */
export async function baseRuns(
  db: Db,
  head: { id: number | null; repository: string; testbedFingerprint: string; before: string },
  branch: string,
  n: number,
  valid = true,
): Promise<{ id: number; public_id: string; document_json: string }[]> {
  return db.all(
    `WITH repo AS (SELECT id FROM repositories WHERE name = ?)
     SELECT r.id, r.public_id, r.document_json FROM repo JOIN runs r ON r.repository_id = repo.id
       AND r.testbed_id = (SELECT id FROM testbeds WHERE repository_id = repo.id AND fingerprint = ?)
       AND r.branch_id = (SELECT id FROM branches WHERE repository_id = repo.id AND name = ?)
     WHERE r.id != ? AND r.created_at <= ? AND r.valid = ?
     ORDER BY r.created_at DESC, r.id DESC LIMIT ?`,
    head.repository,
    head.testbedFingerprint,
    branch,
    head.id ?? -1,
    head.before,
    valid ? 1 : 0,
    n,
  );
}

export async function latestRun(db: Db, repo: string, branch: string | null): Promise<RunRow | null> {
  if (branch !== null) {
    return db.first<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE p.name = ? AND b.name = ? ORDER BY r.created_at DESC, r.id DESC LIMIT 1`,
      repo,
      branch,
    );
  }
  return db.first<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE p.name = ? ORDER BY r.created_at DESC, r.id DESC LIMIT 1`,
    repo,
  );
}

export async function listRepositories(
  db: Db,
): Promise<{ name: string; runs: number; last_run_at: string | null }[]> {
  return db.all(
    `SELECT p.name, COUNT(r.id) AS runs, MAX(r.created_at) AS last_run_at
     FROM repositories p LEFT JOIN runs r ON r.repository_id = p.id GROUP BY p.id ORDER BY p.name`,
  );
}

export async function repoCatalog(
  db: Db,
  repo: string,
): Promise<{ kind: "testbed" | "benchmark" | "branch"; name: string; extra: string | null }[]> {
  return db.all(
    `WITH repo AS (SELECT id FROM repositories WHERE name = ?)
     SELECT 'testbed' AS kind, t.name AS name, t.fingerprint AS extra FROM testbeds t, repo WHERE t.repository_id = repo.id
     UNION ALL SELECT 'benchmark', bm.name, NULL FROM benchmarks bm, repo WHERE bm.repository_id = repo.id
     UNION ALL SELECT 'branch', b.name, NULL FROM branches b, repo WHERE b.repository_id = repo.id`,
    repo,
  );
}

/** The series query (also used by bench/service.ts for EXPLAIN QUERY PLAN). */
export function seriesSql(testbedGiven: boolean): string {
  const testbedSql = testbedGiven
    ? "(SELECT t.id FROM testbeds t WHERE t.repository_id = repo.id AND (t.fingerprint = ? OR t.name = ?) LIMIT 1)"
    : "(SELECT r2.testbed_id FROM runs r2 WHERE r2.repository_id = repo.id ORDER BY r2.created_at DESC LIMIT 1)";
  return `WITH repo AS (SELECT id FROM repositories WHERE name = ?)
     SELECT pt.value, pt.created_at, r.public_id AS run_id, r.commit_sha, t.name AS testbed, b.name AS branch,
       pt.verdict, r.valid * pt.valid AS valid, r.pr_number
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

/** A run's stored per-request samples (shared/samples.ts), as a document's `samples`. */
export async function runSamples(
  db: Db,
  runId: number,
): Promise<{ level: number; measure: string; values: number[]; sizes?: number[] }[]> {
  const rows = await db.all<{
    level: number;
    measure: string;
    values_json: string;
    sizes_json: string | null;
  }>("SELECT level, measure, values_json, sizes_json FROM run_samples WHERE run_id = ?", runId);
  return rows.map((r) => ({
    level: r.level,
    measure: r.measure,
    values: JSON.parse(r.values_json) as number[],
    ...(r.sizes_json ? { sizes: JSON.parse(r.sizes_json) as number[] } : {}),
  }));
}
