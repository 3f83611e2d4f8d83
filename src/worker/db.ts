/**
 * D1 access for the results service. Prepared statements only; an ingest is one D1 batch (one
 * transaction: it lands whole or not at all); every read path is one indexed query.
 */
import type { ResultDocument } from "../schema/v1.ts";
import type { RunSummary, SeriesPoint } from "../shared/api-types.ts";
import { documentPoints, type Point } from "../shared/measures.ts";
import {
  canonicalJson,
  sha256Hex,
  testbedDisplayName,
  testbedFingerprint,
  testbedSpec,
} from "../shared/testbed.ts";
import { ApiError } from "./errors.ts";

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

export const MAX_DOCUMENT_BYTES = 1_900_000; // below D1's 2 MB row limit
const POINTS_PER_STATEMENT = 20; // 4 bound parameters each + 1: below D1's 100

export interface IngestAuth {
  jti: string | null;
  jtiExpiresAt: number | null;
}

export function storedDocument(doc: ResultDocument): ResultDocument {
  return { ...doc, requests: null, requests_file: null };
}

export async function runPublicId(stored: ResultDocument): Promise<string> {
  return (await sha256Hex(canonicalJson(stored))).slice(0, 16);
}

export async function findRun(db: Db, publicId: string): Promise<RunRow | null> {
  return db.first<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE r.public_id = ?`, publicId);
}

export async function storeRun(
  db: Db,
  doc: ResultDocument,
  auth: IngestAuth,
  nowIso: string,
): Promise<{ run: RunRow; created: boolean; points: number }> {
  const repo = doc.repository!;
  const stored = storedDocument(doc);
  const json = JSON.stringify(stored);
  if (new TextEncoder().encode(json).length > MAX_DOCUMENT_BYTES) {
    throw new ApiError(413, "document_too_large", `stored document exceeds ${MAX_DOCUMENT_BYTES} bytes`);
  }
  const publicId = await runPublicId(stored);
  const existing = await findRun(db, publicId);
  const jtiStmt =
    auth.jti !== null
      ? db.d1
          .prepare("INSERT INTO oidc_jti (jti, expires_at) VALUES (?, ?)")
          .bind(auth.jti, auth.jtiExpiresAt ?? 0)
      : null;
  if (existing) {
    if (jtiStmt) await runBatch(db, [jtiStmt]);
    return { run: existing, created: false, points: 0 };
  }
  const spec = testbedSpec(doc);
  const fp = await testbedFingerprint(spec);
  const branch = doc.git?.branch ?? null;
  const points = documentPoints(doc);
  const d1 = db.d1;
  const stmts: D1PreparedStatement[] = [
    d1
      .prepare("INSERT INTO repositories (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING")
      .bind(repo, nowIso),
  ];
  if (branch !== null) {
    stmts.push(
      d1
        .prepare(
          "INSERT INTO branches (repository_id, name) SELECT id, ? FROM repositories WHERE name = ? ON CONFLICT (repository_id, name) DO NOTHING",
        )
        .bind(branch, repo),
    );
  }
  stmts.push(
    d1
      .prepare(
        `INSERT INTO testbeds (repository_id, fingerprint, name, spec_json) SELECT id, ?, ?, ? FROM repositories WHERE name = ?
         ON CONFLICT (repository_id, fingerprint) DO UPDATE SET name = excluded.name`,
      )
      .bind(fp, testbedDisplayName(doc, spec), canonicalJson(spec), repo),
  );
  for (const b of new Set(points.map((p) => p.benchmark))) {
    stmts.push(
      d1
        .prepare(
          "INSERT INTO benchmarks (repository_id, name) SELECT id, ? FROM repositories WHERE name = ? ON CONFLICT (repository_id, name) DO NOTHING",
        )
        .bind(b, repo),
    );
  }
  const g = doc.git ?? null;
  stmts.push(
    d1
      .prepare(
        `INSERT INTO runs (public_id, repository_id, branch_id, testbed_id, kind, commit_sha, pr_number, workflow_run_id,
           run_attempt, created_at, ingested_at, measured_at, document_json)
         SELECT ?, r.id,
           (SELECT b.id FROM branches b WHERE b.repository_id = r.id AND b.name = ?),
           (SELECT t.id FROM testbeds t WHERE t.repository_id = r.id AND t.fingerprint = ?),
           ?, ?, ?, ?, ?, ?, ?, ?, ?
         FROM repositories r WHERE r.name = ?`,
      )
      .bind(
        publicId,
        branch,
        fp,
        doc.kind,
        g?.sha ?? null,
        g?.pr_number ?? null,
        g?.workflow_run_id ?? null,
        g?.run_attempt ?? null,
        nowIso, // history is ordered by the service's receive time, never the uploader's clock
        nowIso,
        doc.created_at,
        json,
        repo,
      ),
  );
  for (let i = 0; i < points.length; i += POINTS_PER_STATEMENT) {
    stmts.push(pointsStatement(d1, publicId, points.slice(i, i + POINTS_PER_STATEMENT)));
  }
  if (jtiStmt) stmts.push(jtiStmt, pruneJti(d1, nowIso));
  try {
    await runBatch(db, stmts);
  } catch (err) {
    const again = await findRun(db, publicId);
    if (again) return { run: again, created: false, points: 0 }; // a concurrent upload of the same run won
    throw err;
  }
  const run = await findRun(db, publicId);
  if (!run) throw new ApiError(500, "ingest_lost", "run not found after ingest");
  return { run, created: true, points: points.length };
}

/** Used OIDC token ids are kept until their token expires (plus the verifier's leeway), then dropped. */
function pruneJti(d1: D1Database, nowIso: string): D1PreparedStatement {
  return d1
    .prepare("DELETE FROM oidc_jti WHERE expires_at < ?")
    .bind(Math.floor(Date.parse(nowIso) / 1000) - JTI_LEEWAY_S);
}
const JTI_LEEWAY_S = 300;

function pointsStatement(d1: D1Database, publicId: string, pts: Point[]): D1PreparedStatement {
  const values = pts.map(() => "(?, ?, ?, ?)").join(", ");
  const params: unknown[] = [];
  for (const p of pts) params.push(p.benchmark, p.measure, p.level, p.value);
  params.push(publicId);
  return d1
    .prepare(
      `WITH v (benchmark, measure, level, value) AS (VALUES ${values})
       INSERT INTO points (run_id, repository_id, branch_id, testbed_id, benchmark_id, measure_id, level, value, created_at)
       SELECT r.id, r.repository_id, r.branch_id, r.testbed_id, b.id, m.id, v.level, v.value, r.created_at
       FROM v JOIN runs r ON r.public_id = ?
       JOIN benchmarks b ON b.repository_id = r.repository_id AND b.name = v.benchmark
       JOIN measures m ON m.name = v.measure`,
    )
    .bind(...params);
}

async function runBatch(db: Db, stmts: D1PreparedStatement[]): Promise<void> {
  try {
    const res = await db.d1.batch(stmts);
    for (const r of res) db.rowsRead += r.meta?.rows_read ?? 0;
  } catch (err) {
    const msg = String((err as Error).message ?? err);
    if (msg.includes("oidc_jti.jti"))
      throw new ApiError(401, "token_replayed", "this OIDC token was already used (jti)");
    if (msg.includes("UNIQUE constraint failed: points"))
      throw new ApiError(
        422,
        "duplicate_points",
        "the document gives one measure twice for the same benchmark (two levels with the same name?)",
      );
    throw err;
  }
}

export interface ListRunsQuery {
  branch: string | null;
  testbed: string | null;
  sha: string | null;
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
): Promise<(RunRow & { document_json: string }) | null> {
  return db.first(`SELECT ${RUN_COLUMNS}, r.document_json FROM ${RUN_FROM} WHERE r.public_id = ?`, publicId);
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
 * The baseline: every point of the last `n` runs of `branch` on the head's testbed, measured no
 * later than the head (the head itself excluded). Two index range scans: the runs, then their
 * points by run id.
 */
export async function baselinePoints(
  db: Db,
  head: { id: number; repository: string; testbedFingerprint: string; createdAt: string },
  branch: string,
  n: number,
): Promise<{ benchmark: string; measure: string; value: number; run_id: string; created_at: string }[]> {
  return db.all(
    `WITH repo AS (SELECT id FROM repositories WHERE name = ?),
     base_runs AS (
       SELECT r.id, r.public_id FROM repo JOIN runs r ON r.repository_id = repo.id
         AND r.testbed_id = (SELECT id FROM testbeds WHERE repository_id = repo.id AND fingerprint = ?)
         AND r.branch_id = (SELECT id FROM branches WHERE repository_id = repo.id AND name = ?)
       WHERE r.id != ? AND r.created_at <= ?
       ORDER BY r.created_at DESC, r.id DESC LIMIT ?
     )
     SELECT bm.name AS benchmark, m.name AS measure, pt.value, br.public_id AS run_id, pt.created_at
     FROM base_runs br JOIN points pt ON pt.run_id = br.id
     JOIN benchmarks bm ON bm.id = pt.benchmark_id JOIN measures m ON m.id = pt.measure_id
     ORDER BY bm.name, m.name, pt.created_at DESC`,
    head.repository,
    head.testbedFingerprint,
    branch,
    head.id,
    head.createdAt,
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
