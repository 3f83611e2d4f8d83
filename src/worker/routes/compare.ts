/** Series for trend charts, and compare: a run against its base branch's recent runs. */
import { Hono } from "hono";
import type { ResultDocument } from "../../schema/v1.ts";
import type { ChangePointsResponse, SeriesResponse } from "../../shared/api-types.ts";
import { changePoints } from "../../shared/change-points.ts";
import { type FailOn, parseFailOn, parseGate, parseRules, RulesError } from "../../shared/rules.ts";
import { VERDICT_DEFAULTS } from "../../shared/verdict.ts";
import { type AppEnv, routeRepo, runJson } from "../context.ts";
import { latestRun, runDocument, runSamples, series } from "../db.ts";
import { ApiError } from "../errors.ts";
import { compareBody, type Judged, type JudgeOptions, judgeStoredRun, overrides } from "../judge.ts";
import { QUERIES, readQuery } from "../query-params.ts";

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
 * (shared/change-points.ts) over its last `limit` runs, oldest first, invalid runs left out (a
 * client-bound run would otherwise look like a change of the server). Each change names the run
 * that starts the new segment.
 */
compare.get("/repos/:owner/:repo/change-points", async (c) => {
  const repo = routeRepo(c);
  const q = readQuery(c, QUERIES.changePoints);
  const benchmark = q.benchmark!;
  const def = q.measure!;
  const branch = q.branch ?? "main";
  const all = (
    await series(c.get("db"), repo, {
      benchmark,
      measure: def.name,
      testbed: q.testbed,
      branch,
      limit: q.limit,
      since: null,
    })
  ).reverse();
  const points = all.filter((p) => p.valid !== 0);
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
    invalid_left_out: all.length - points.length,
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
  let failOn: FailOn;
  const opts: JudgeOptions = {
    baseBranch: q.base_branch,
    n: q.n,
    thresholds: q.thresholds,
    gate: q.gate,
    fwerPct: q.fwer === VERDICT_DEFAULTS.fwerPct ? null : q.fwer,
    fallbackPct: q.threshold_pct,
    confidence: q.confidence,
    minHistory: q.min_points,
  };
  try {
    failOn = parseFailOn(q.fail_on ?? undefined);
    parseGate(q.gate, parseRules(q.thresholds ?? undefined));
  } catch (err) {
    if (err instanceof RulesError) throw new ApiError(400, "invalid_rules", err.message);
    throw err;
  }
  // The verdict kept at ingest, unless the query asks for another; a run kept before verdicts were, judged now.
  const kept = head.verdict_json ? (JSON.parse(head.verdict_json) as Judged) : null;
  const judged =
    kept && !overrides(opts, kept.baseBranch)
      ? kept
      : await judgeStoredRun(
          db,
          {
            id: head.id,
            repository: repo,
            testbedFingerprint: head.testbed_fingerprint,
            before: head.created_at,
          },
          { ...doc, samples: await runSamples(db, head.id) },
          opts,
        );
  return c.json(compareBody(runJson(head), judged, failOn));
});
