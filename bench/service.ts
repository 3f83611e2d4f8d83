// Results service speed (issue #5), on local workerd (`wrangler dev`, local D1): ingest latency of
// a 7-level run; series, compare and badge latency with 10,000 stored runs (1.05 M points); D1
// rows read per request; EXPLAIN QUERY PLAN of the series query.
// Usage: npx tsx bench/service.ts
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startService } from "../scripts/local-service.ts";
import type { ResultDocument } from "../src/schema/v1.ts";
import { f, pct, verdict } from "./lib.ts";

const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = resolve(ROOT, "node_modules/.bin/wrangler");
const ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };
const RUNS = 10_000;
const repo = "bench/service";
const results: Record<string, unknown> = {};

const dir = mkdtempSync(join(tmpdir(), "tokenbench-bench-d1-"));
const d1 = (...args: string[]) => {
  const r = spawnSync(WRANGLER, ["d1", ...args, "--local", "--persist-to", dir], {
    cwd: ROOT,
    env: ENV,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`wrangler d1 ${args[0]} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
};
d1("migrations", "apply", "tokenbench");
const levels = [1, 2, 4, 8, 16, 32, 64];
const seed = `
INSERT INTO repositories (id, name, created_at) VALUES (1, '${repo}', '2026-01-01T00:00:00Z');
INSERT INTO branches (id, repository_id, name) VALUES (1, 1, 'main'), (2, 1, 'pr');
INSERT INTO testbeds (id, repository_id, fingerprint, name, spec_json) VALUES (1, 1, 'bench0fingerprint', 'bench-tb', '{}');
INSERT INTO benchmarks (id, repository_id, name) VALUES ${levels.map((l, i) => `(${i + 1}, 1, 'closed c=${l}')`).join(", ")};
WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${RUNS})
INSERT INTO runs (id, public_id, repository_id, branch_id, testbed_id, kind, commit_sha, pr_number, workflow_run_id, run_attempt, created_at, ingested_at, document_json)
SELECT i, printf('%016x', i), 1, CASE WHEN i % 10 = 0 THEN 2 ELSE 1 END, 1, 'sweep', printf('%040x', i), NULL, CAST(i AS TEXT), 1,
  strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes'), '2026-01-01T00:00:00Z', '{}' FROM seq;
INSERT INTO points (run_id, repository_id, branch_id, testbed_id, benchmark_id, measure_id, level, value, created_at)
SELECT r.id, 1, r.branch_id, 1, b.id, m.id, b.id, 100.0 + (r.id % 7) + m.id, r.created_at
FROM runs r, benchmarks b, measures m WHERE m.id <= 15;
`;
const seedFile = join(dir, "seed.sql");
writeFileSync(seedFile, seed);
let t0 = performance.now();
d1("execute", "tokenbench", "--file", seedFile);
const counts = d1(
  "execute",
  "tokenbench",
  "--json",
  "--command",
  "SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(*) FROM points) AS points",
);
console.log(
  `seeded in ${f((performance.now() - t0) / 1000, 1)} s: ${counts.replace(/\s+/g, " ").match(/"runs":\s*\d+, "points":\s*\d+/)?.[0] ?? counts.slice(0, 200)}`,
);

// The series query as the service runs it. db.ts is typed against the Workers runtime (D1), which
// this Node typecheck does not load, so it is imported by a path the compiler does not follow.
const DB_MODULE: string = "../src/worker/db.ts";
const { seriesSql } = (await import(DB_MODULE)) as { seriesSql: (testbedGiven: boolean) => string };
const plan = d1(
  "execute",
  "tokenbench",
  "--json",
  "--command",
  `EXPLAIN QUERY PLAN ${seriesSql(true)}`
    .replace("name = ?)", `name = '${repo}')`)
    .replace("AND name = ?)", "AND name = 'closed c=8')")
    .replace("WHERE name = ?)", "WHERE name = 'output_tok_s')")
    .replace(
      "(t.fingerprint = ? OR t.name = ?)",
      "(t.fingerprint = 'bench0fingerprint' OR t.name = 'bench0fingerprint')",
    )
    .replace("AND name = ?)", "AND name = 'main')")
    .replace("pt.created_at >= ?", "pt.created_at >= ''")
    .replace("LIMIT ?", "LIMIT 100"),
);
const details = [...plan.matchAll(/"detail":\s*"([^"]+)"/g)].map((m) => m[1]!);
console.log("EXPLAIN QUERY PLAN (series):");
for (const d of details) console.log(`  ${d}`);
const usesIndex = details.some((d) => d.includes("points_series"));
console.log(`  series uses the points_series index: ${usesIndex ? "yes" : "NO"}`);
results.series_plan = details;

const service = await startService({}, dir);
try {
  const token = await service.apiToken(repo);
  const timed = async (url: string, n: number, init?: RequestInit) => {
    const ms: number[] = [];
    const rows: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const r = await fetch(url, init);
      await r.arrayBuffer();
      ms.push(performance.now() - t);
      rows.push(Number(r.headers.get("x-tokenbench-rows-read") ?? "NaN"));
      if (!r.ok && r.status !== 304) throw new Error(`${url}: HTTP ${r.status}`);
    }
    return { p50: pct(ms, 0.5), p99: pct(ms, 0.99), rows: pct(rows, 0.5) };
  };
  const q = new URLSearchParams({
    benchmark: "closed c=8",
    measure: "output_tok_s",
    testbed: "bench0fingerprint",
    branch: "main",
    limit: "100",
  });
  // warm the isolate
  await timed(`${service.url}/api/v1/repos/${repo}/series?${q}`, 20);
  const series = await timed(`${service.url}/api/v1/repos/${repo}/series?${q}`, 200);
  const badge = await timed(`${service.url}/badge/${repo}.svg?${q}`, 200);
  const badgeDefault = await timed(`${service.url}/badge/${repo}.svg`, 100);
  const compare = await timed(
    `${service.url}/api/v1/repos/${repo}/compare?head=${RUNS.toString(16).padStart(16, "0")}&base_branch=main&n=10`,
    50,
  );
  const line = (name: string, r: { p50: number; p99: number; rows: number }, target?: number) =>
    console.log(
      `${name}: p50 ${f(r.p50, 2)} ms, p99 ${f(r.p99, 2)} ms, D1 rows read ${r.rows}${target !== undefined ? ` [target p50 <= ${target} ms: ${verdict(r.p50 <= target)}]` : ""}`,
    );
  line(`series (100 points, ${RUNS} runs stored)`, series, 20);
  line("badge, explicit benchmark/measure/testbed/branch (one query)", badge, 20);
  line("badge, defaults (latest run -> headline -> series: three queries)", badgeDefault);
  line("compare (head vs last 10 main runs, 105 measures)", compare);
  results.series_ms = series;
  results.badge_ms = badge;
  results.badge_default_ms = badgeDefault;
  results.compare_ms = compare;

  // ingest: distinct 7-level documents, as the Action posts them
  const example = JSON.parse(
    readFileSync(resolve(ROOT, "schema/examples/closed-sweep.json"), "utf8"),
  ) as ResultDocument;
  const ms: number[] = [];
  const bytes: number[] = [];
  for (let i = 0; i < 40; i++) {
    const d: ResultDocument = {
      ...example,
      repository: repo,
      requests: null,
      created_at: new Date(Date.UTC(2027, 0, 1) + i * 1000).toISOString(),
    };
    d.levels = levels.map((l) => ({ ...example.levels[0]!, level: l, concurrency: l }));
    d.config = { ...example.config!, levels };
    d.git = {
      sha: `${i}`.padStart(40, "c"),
      ref: "refs/heads/main",
      branch: "main",
      base_branch: "main",
      pr_number: null,
      workflow_run_id: String(i),
      run_attempt: 1,
    };
    const body = JSON.stringify(d);
    bytes.push(body.length);
    const t = performance.now();
    const r = await fetch(`${service.url}/api/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });
    await r.arrayBuffer();
    ms.push(performance.now() - t);
    if (r.status !== 201) throw new Error(`ingest HTTP ${r.status}`);
  }
  const ingest = { p50: pct(ms.slice(5), 0.5), p99: pct(ms.slice(5), 0.99) };
  console.log(
    `ingest of a 7-level run (${f(pct(bytes, 0.5) / 1024, 1)} KiB, 105 points, one D1 batch): p50 ${f(ingest.p50, 2)} ms, p99 ${f(ingest.p99, 2)} ms [target p50 <= 50 ms: ${verdict(ingest.p50 <= 50)}]`,
  );
  results.ingest_ms = ingest;
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
t0 = 0;
console.log(JSON.stringify({ bench: "service", ...results }));
