/** Series for trend charts, and compare: a run against its base branch's recent runs. */
import { Hono } from "hono";
import type { ResultDocument } from "../../schema/v1.ts";
import type { ChangePointsResponse, CompareResponse, SeriesResponse } from "../../shared/api-types.ts";
import { CHANGE_POINT_DEFAULTS, changePoints } from "../../shared/change-points.ts";
import { compareRows } from "../../shared/compare.ts";
import { MEASURE_BY_NAME, type MeasureDef } from "../../shared/measures.ts";
import { type FailOn, fails, parseFailOn, parseRules, type Rules, RulesError } from "../../shared/rules.ts";
import { DEFAULT_THRESHOLDS, type Thresholds } from "../../shared/statistics.ts";
import { type AppEnv, type Ctx, intParam, numParam, routeRepo, runJson } from "../context.ts";
import { baselinePoints, latestRun, runDocument, runPoints, series } from "../db.ts";
import { ApiError } from "../errors.ts";

export const compare = new Hono<AppEnv>();

/** The series a query names: benchmark and measure, both required. */
function seriesOf(c: Ctx): { benchmark: string; def: MeasureDef } {
  const benchmark = c.req.query("benchmark");
  const measure = c.req.query("measure");
  if (!benchmark || !measure) throw new ApiError(400, "invalid_query", "benchmark and measure are required");
  const def = MEASURE_BY_NAME.get(measure);
  if (!def) throw new ApiError(400, "unknown_measure", `unknown measure ${measure}`);
  return { benchmark, def };
}

compare.get("/repos/:owner/:repo/series", async (c) => {
  const repo = routeRepo(c);
  const { benchmark, def } = seriesOf(c);
  const measure = def.name;
  const points = await series(c.get("db"), repo, {
    benchmark,
    measure,
    testbed: c.req.query("testbed") ?? null,
    branch: c.req.query("branch") ?? null,
    limit: intParam(c.req.query("limit"), 100, 1, 1000, "limit"),
    since: c.req.query("since") ?? null,
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
  const { benchmark, def } = seriesOf(c);
  const measure = def.name;
  const branch = c.req.query("branch") || "main";
  const points = (
    await series(c.get("db"), repo, {
      benchmark,
      measure,
      testbed: c.req.query("testbed") ?? null,
      branch,
      limit: intParam(c.req.query("limit"), 100, 8, 200, "limit"),
      since: null,
    })
  ).reverse();
  const opts = {
    minSegment: intParam(c.req.query("min_segment"), CHANGE_POINT_DEFAULTS.minSegment, 2, 50, "min_segment"),
    pValue: numParam(c.req.query("p_value"), CHANGE_POINT_DEFAULTS.pValue, 1e-9, 0.2, "p_value"),
  };
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

function thresholdsFrom(q: (k: string) => string | undefined): Thresholds {
  return {
    pct: numParam(q("threshold_pct"), DEFAULT_THRESHOLDS.pct, 0, 1000, "threshold_pct"),
    confidence: numParam(q("confidence"), DEFAULT_THRESHOLDS.confidence, 0.5, 0.9999, "confidence"),
    minPoints: intParam(q("min_points"), DEFAULT_THRESHOLDS.minPoints, 2, 100, "min_points"),
  };
}

compare.get("/repos/:owner/:repo/compare", async (c) => {
  const repo = routeRepo(c);
  const db = c.get("db");
  const headId = c.req.query("head");
  const head = headId
    ? await runDocument(db, headId)
    : await latestRun(db, repo, null).then((r) => (r ? runDocument(db, r.public_id) : null));
  if (!head || head.repository !== repo)
    throw new ApiError(404, "run_not_found", `no head run ${headId ?? "(latest)"} in ${repo}`);
  const doc = JSON.parse(head.document_json) as ResultDocument;
  const baseBranch = c.req.query("base_branch") ?? doc.git?.base_branch ?? "main";
  const n = intParam(c.req.query("n"), 10, 1, 100, "n");
  const th = thresholdsFrom((k) => c.req.query(k));
  let rules: Rules;
  let failOn: FailOn;
  try {
    rules = parseRules(c.req.query("thresholds"));
    failOn = parseFailOn(c.req.query("fail_on") || "warning");
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
