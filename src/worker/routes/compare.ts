/** Series for trend charts, and compare: a run against its base branch's recent runs. */
import { Hono } from "hono";
import type { ResultDocument } from "../../schema/v1.ts";
import type { ChangePointsResponse, CompareResponse, SeriesResponse } from "../../shared/api-types.ts";
import { changePoints } from "../../shared/change-points.ts";
import { type FailOn, fails, parseFailOn, parseRules, type Rules, RulesError } from "../../shared/rules.ts";
import { documentEvidence, type Evidence, historyEvidence, judgeRuns } from "../../shared/verdict.ts";
import { headline } from "../../shared/verdict-text.ts";
import { type AppEnv, routeRepo, runJson } from "../context.ts";
import { baselinePoints, latestRun, runDocument, runSamples, series } from "../db.ts";
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
  let rules: Rules;
  let failOn: FailOn;
  try {
    rules = parseRules(q.thresholds ?? undefined);
    failOn = parseFailOn(q.fail_on ?? undefined);
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
    q.n,
  );
  const baseRuns = [...new Set(base.map((b) => b.run_id))];
  // A stored run is judged as its file would be: its repeats, or (one run) its stored samples in
  // place of the records its document no longer has.
  const stored = async (id: number, d: ResultDocument): Promise<Evidence> => {
    const e = documentEvidence(d);
    return e.kind === "run" ? { ...e, samples: await runSamples(db, id) } : e;
  };
  const one = baseRuns.length === 1 ? await runDocument(db, baseRuns[0]!) : null;
  const baseEvidence = one
    ? await stored(one.id, JSON.parse(one.document_json) as ResultDocument)
    : historyEvidence(base);
  const headEvidence = await stored(head.id, doc);
  const summary = judgeRuns(baseEvidence, headEvidence, {
    rules,
    fallbackPct: q.threshold_pct,
    confidence: q.confidence,
    minHistory: q.min_points,
  });
  const body: CompareResponse = {
    head: runJson(head),
    base_branch: baseBranch,
    baseline_runs: baseRuns,
    base_name: baseRuns.length === 1 ? `the last run of ${baseBranch}` : baseBranch,
    headline:
      baseRuns.length === 0
        ? `No runs of ${baseBranch} on this testbed yet: nothing to compare against.`
        : headline(summary.rows),
    fail_on: failOn,
    failed: fails(
      summary.rows.map((r) => r.severity),
      failOn,
    ),
    ...summary,
  };
  return c.json(body);
});
