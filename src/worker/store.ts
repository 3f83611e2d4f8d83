/**
 * The write side of the results service: an ingest is one D1 batch (one transaction: it lands
 * whole or not at all), idempotent for the same body, and one run per CI attempt.
 */
import type { ResultDocument } from "../schema/v1.ts";
import { runFigures } from "../shared/evidence.ts";
import { documentPoints, MEASURE_BY_NAME, type Point } from "../shared/measures.ts";
import { indexValidRuns, keyOf } from "../shared/row-facts.ts";
import { documentSamples, samplesProblem } from "../shared/samples.ts";
import {
  canonicalJson,
  sha256Hex,
  testbedDisplayName,
  testbedFingerprint,
  testbedSpec,
} from "../shared/testbed.ts";
import { type Db, findRun, type RunRow } from "./db.ts";
import { ApiError } from "./errors.ts";
import { judgeStoredRun } from "./judge.ts";

export const MAX_DOCUMENT_BYTES = 1_900_000; // below D1's 2 MB row limit
const POINTS_PER_STATEMENT = 16; // 6 bound parameters each + 1: below D1's 100

export interface IngestAuth {
  jti: string | null;
  jtiExpiresAt: number | null;
}

/** The document as stored: no records (and no samples: those go to run_samples). */
export function storedDocument(doc: ResultDocument): ResultDocument {
  const { samples: _samples, ...rest } = doc;
  return {
    ...rest,
    requests: null,
    requests_file: null,
    ...(doc.gpu_telemetry ? { gpu_telemetry: { ...doc.gpu_telemetry, samples: null } } : {}),
  };
}

export async function runPublicId(stored: ResultDocument): Promise<string> {
  return (await sha256Hex(canonicalJson(stored))).slice(0, 16);
}

/**
 * Which CI attempt a document is: workflow run id, attempt, kind, testbed and shard (null outside
 * CI, where there is no attempt to count twice). A workflow run's matrix jobs differ by testbed,
 * and one job's sweep and profile by kind.
 */
export function runIdentity(doc: ResultDocument, testbedFp: string): string | null {
  const g = doc.git;
  if (!g?.workflow_run_id) return null;
  return [g.workflow_run_id, g.run_attempt ?? 0, doc.kind, testbedFp, doc.load_generator?.shard ?? ""].join(
    ":",
  );
}

/** The public id of the run stored under this identity, if any. */
async function runWithIdentity(db: Db, repo: string, identity: string): Promise<string | null> {
  const row = await db.first<{ public_id: string }>(
    `SELECT r.public_id FROM run_identities i JOIN runs r ON r.id = i.run_id
     WHERE i.repository_id = (SELECT id FROM repositories WHERE name = ?) AND i.identity = ?`,
    repo,
    identity,
  );
  return row?.public_id ?? null;
}

function conflict(identity: string, storedId: string, doc: ResultDocument): ApiError {
  return new ApiError(
    409,
    "run_conflict",
    `workflow run ${doc.git?.workflow_run_id} attempt ${doc.git?.run_attempt ?? "?"} already stored a different ${doc.kind} document for this testbed (run ${storedId}): one CI attempt is one run. Re-run the workflow (a new attempt) to measure again`,
    { identity, run_id: storedId },
  );
}

export async function storeRun(
  db: Db,
  doc: ResultDocument,
  auth: IngestAuth,
  nowIso: string,
): Promise<{ run: RunRow; created: boolean; points: number }> {
  const repo = doc.repository!;
  const badSamples = samplesProblem(doc);
  if (badSamples !== null) throw new ApiError(422, "samples_invalid", badSamples);
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
  const identity = runIdentity(doc, fp);
  if (identity !== null) {
    const storedId = await runWithIdentity(db, repo, identity);
    if (storedId !== null) throw conflict(identity, storedId, doc);
  }
  const branch = doc.git?.branch ?? null;
  const points = documentPoints(doc);
  // Judged once, as it arrives, against the base branch's history before it: the comment, the
  // badge, the trend point and the pages all read this verdict.
  const judged = await judgeStoredRun(
    db,
    { id: null, repository: repo, testbedFingerprint: fp, before: nowIso },
    doc,
  );
  const verdictOf = new Map(judged.summary.rows.map((r) => [`${r.benchmark}\u0000${r.measure}`, r.verdict]));
  // A run enters base histories when a level of it is valid; each point says whether its own is.
  // (every point of the run, its run-wide ones too: a search's answer, the server's start)
  const figures = runFigures(doc, doc.levels, "stored", points);
  const valid = figures.invalid === null ? 1 : 0;
  const validKeys = indexValidRuns([figures], (m) => MEASURE_BY_NAME.get(m))[0]!;
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
           run_attempt, created_at, ingested_at, measured_at, document_json, valid, verdict_json)
         SELECT ?, r.id,
           (SELECT b.id FROM branches b WHERE b.repository_id = r.id AND b.name = ?),
           (SELECT t.id FROM testbeds t WHERE t.repository_id = r.id AND t.fingerprint = ?),
           ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
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
        valid,
        JSON.stringify(judged),
        repo,
      ),
  );
  for (let i = 0; i < points.length; i += POINTS_PER_STATEMENT) {
    stmts.push(
      pointsStatement(d1, publicId, points.slice(i, i + POINTS_PER_STATEMENT), verdictOf, validKeys),
    );
  }
  for (const smp of documentSamples(doc))
    stmts.push(
      d1
        .prepare(
          "INSERT INTO run_samples (run_id, level, measure, values_json, sizes_json) SELECT id, ?, ?, ?, ? FROM runs WHERE public_id = ?",
        )
        .bind(
          smp.level,
          smp.measure,
          JSON.stringify(smp.values),
          smp.sizes ? JSON.stringify(smp.sizes) : null,
          publicId,
        ),
    );
  if (identity !== null)
    stmts.push(
      d1
        .prepare(
          "INSERT INTO run_identities (repository_id, identity, run_id) SELECT repository_id, ?, id FROM runs WHERE public_id = ?",
        )
        .bind(identity, publicId),
    );
  if (jtiStmt) stmts.push(jtiStmt, pruneJti(d1, nowIso));
  try {
    await runBatch(db, stmts);
  } catch (err) {
    const again = await findRun(db, publicId);
    if (again) return { run: again, created: false, points: 0 }; // a concurrent upload of the same run won
    // a concurrent upload of another body for the same attempt won the identity
    const other = identity !== null ? await runWithIdentity(db, repo, identity) : null;
    if (identity !== null && other !== null) throw conflict(identity, other, doc);
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

function pointsStatement(
  d1: D1Database,
  publicId: string,
  pts: Point[],
  verdicts: ReadonlyMap<string, string>,
  validKeys: ReadonlyMap<string, number>,
): D1PreparedStatement {
  const values = pts.map(() => "(?, ?, ?, ?, ?, ?)").join(", ");
  const params: unknown[] = [];
  for (const p of pts)
    params.push(
      p.benchmark,
      p.measure,
      p.level,
      p.value,
      verdicts.get(`${p.benchmark}\u0000${p.measure}`) ?? null,
      validKeys.has(keyOf(p.benchmark, p.measure)) ? 1 : 0,
    );
  params.push(publicId);
  return d1
    .prepare(
      `WITH v (benchmark, measure, level, value, verdict, valid) AS (VALUES ${values})
       INSERT INTO points (run_id, repository_id, branch_id, testbed_id, benchmark_id, measure_id, level, value, created_at, verdict, valid)
       SELECT r.id, r.repository_id, r.branch_id, r.testbed_id, b.id, m.id, v.level, v.value, r.created_at, v.verdict, v.valid
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
