/** Series for trend charts, and compare: a run against its base branch's recent runs. */
import { Hono } from "hono";
import type { ResultDocument } from "../../schema/v1.ts";
import type { ChangePointsResponse, CompareResponse, SeriesResponse } from "../../shared/api-types.ts";
import { changePoints } from "../../shared/change-points.ts";
import { compareRows } from "../../shared/compare.ts";
import { type FailOn, fails, parseFailOn, parseRules, type Rules, RulesError } from "../../shared/rules.ts";
import type { Thresholds } from "../../shared/statistics.ts";
import { type AppEnv, routeRepo, runJson } from "../context.ts";
import { baselinePoints, latestRun, runDocument, runPoints, series } from "../db.ts";
import { ApiError } from "../errors.ts";
import { QUERIES, readQuery } from "../query.ts";

export const compare = new Hono<AppEnv>();

compare.get("/repos/:owner/:repo/series", async (c) => {
  const repo = routeRepo(c);
  const q = readQuery(c, QUERIES.series);
  const benchmark = q.benchmark!;
  const def = q.measure!;
  const points = await series(c.get("db"), repo, {
    benchmark,
    measure: def.name,
    testbed: q.testbed,
    branch: q.branch,
    limit: q.limit,
    since: q.since,
  });
  const body: SeriesResponse = { repository: repo, benchmark, measure: def, points: points.reverse() };
  return c.json(body);
});

/**
 * Change points of one series (branch default main): E-divisive means with a Student-t test
 * (shared/change-points.ts) over its last `limit` runs, oldest first. Each change names the run
 * that starts the new segment.
 */
compare.get("/repos/:owner/:repo/change-points", async (c) => {
  const repo = routeRepo(c);
  const q = readQuery(c, QUERIES.changePoints);
  const benchmark = q.benchmark!;
  const def = q.measure!;
  const branch = q.branch ?? "main";
  const points = (
    await series(c.get("db"), repo, {
      benchmark,
      measure: def.name,
      testbed: q.testbed,
      branch,
      limit: q.limit,
      since: null,
    })
  ).reverse();
  const opts = { minSegment: q.min_segment, pValue: q.p_value };
  const found = changePoints(
    points.map((p) => p.value),
    opts,
  );
  const body: ChangePointsResponse = {
    repository: repo,
    benchmark,
    measure: def,
    branch,
    points: points.length,
    min_segment: opts.minSegment,
    p_value: opts.pValue,
    change_points: found.map((cp) => ({
      ...cp,
      run_id: points[cp.index]!.run_id,
      commit_sha: points[cp.index]!.commit_sha,
      created_at: points[cp.index]!.created_at,
    })),
  };
  return c.json(body);
});

compare.get("/repos/:owner/:repo/compare", async (c) => {
  const repo = routeRepo(c);
  const db = c.get("db");
  const q = readQuery(c, QUERIES.compare);
  const headId = q.head;
  const head = headId
    ? await runDocument(db, headId)
    : await latestRun(db, repo, null).then((r) => (r ? runDocument(db, r.public_id) : null));
  if (!head || head.repository !== repo)
    throw new ApiError(404, "run_not_found", `no head run ${headId ?? "(latest)"} in ${repo}`);
  const doc = JSON.parse(head.document_json) as ResultDocument;
  const baseBranch = q.base_branch ?? doc.git?.base_branch ?? "main";
  const n = q.n;
  const th: Thresholds = { pct: q.threshold_pct, confidence: q.confidence, minPoints: q.min_points };
  let rules: Rules;
  let failOn: FailOn;
  try {
    rules = parseRules(q.thresholds ?? undefined);
    failOn = parseFailOn(q.fail_on ?? "warning");
  } catch (err) {
    if (err instanceof RulesError) throw new ApiError(400, "invalid_rules", err.message);
    throw err;
  }
  const base = await baselinePoints(
    db,
    {
      id: head.id,
      repository: repo,
      testbedFingerprint: head.testbed_fingerprint,
      createdAt: head.created_at,
    },
    baseBranch,
    n,
  );
  const summary = compareRows(await runPoints(db, head.id), base, th, rules);
  const body: CompareResponse = {
    head: runJson(head),
    base_branch: baseBranch,
    baseline_runs: [...new Set(base.map((b) => b.run_id))],
    thresholds: th,
    rules: summary.rules,
    fail_on: failOn,
    failed: fails(
      summary.rows.map((r) => r.severity),
      failOn,
    ),
    counts: summary.counts,
    rows: summary.rows,
  };
  return c.json(body);
});
