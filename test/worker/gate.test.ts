// The gate's hard cases through the results service (workerd, real D1), as the CLI meets them in
// test/unit/shared/verdict.test.ts: a server that breaks (error rate 0 → 25 %, a level where every
// request failed) fails the gate; a history with one slow run in twenty flags that run instead of
// averaging it in; a run with an invalid level never enters a base history.
import { describe, expect, it } from "vitest";
import type { ResultDocument } from "../../src/schema/v1.ts";
import {
  DEFAULT_MODEL,
  invalidLevel,
  NO_CHANGE,
  type NoiseModel,
  rng,
  runDocument,
} from "../helpers/ci-noise.ts";
import { apiToken, call, json, upload } from "./helpers.ts";

const QUIET: NoiseModel = { ...DEFAULT_MODEL, noisePct: 1, jobShare: 0.5, errorRate: 0 };
let seq = 0;

/** A model run as a run of `branch` of `repo` (PR `pr` when given). */
function asRun(doc: ResultDocument, repo: string, branch: string, pr: number | null = null): ResultDocument {
  const n = ++seq;
  return {
    ...doc,
    repository: repo,
    created_at: new Date(Date.UTC(2026, 1, 1) + n * 60_000).toISOString(),
    git: {
      sha: `${n.toString(16).padStart(8, "0")}cafef00d`,
      ref: `refs/heads/${branch}`,
      branch,
      base_branch: "main",
      pr_number: pr,
      workflow_run_id: String(5000 + n),
      run_attempt: 1,
    },
  };
}

async function history(repo: string, docs: ResultDocument[]): Promise<{ token: string; ids: string[] }> {
  const token = await apiToken(repo);
  const ids: string[] = [];
  for (const d of docs) {
    const res = await upload(asRun(d, repo, "main"), token);
    expect(res.status, await res.clone().text()).toBe(201);
    ids.push((await json(res)).run.id);
  }
  return { token, ids };
}

async function judgeHead(repo: string, token: string, head: ResultDocument) {
  const res = await upload(asRun(head, repo, "feature", 7), token);
  expect(res.status, await res.clone().text()).toBe(201);
  const id = (await json(res)).run.id;
  return json(call(`/api/v1/repos/${repo}/compare?head=${id}`));
}

const pick = (c: { rows: { benchmark: string; measure: string }[] }, benchmark: string, measure: string) =>
  c.rows.find((r) => r.benchmark === benchmark && r.measure === measure) as unknown as Record<
    string,
    unknown
  >;

describe("the gate through the service", () => {
  it("error rate 0 → 25 %: +25 points, regressed, the gate fails", async () => {
    const r = rng(31);
    const repo = "acme/gate-errors";
    const { token } = await history(
      repo,
      Array.from({ length: 8 }, () => runDocument(r, QUIET, 0, NO_CHANGE)),
    );
    const c = await judgeHead(repo, token, runDocument(r, { ...QUIET, errorRate: 0.25 }, 0, NO_CHANGE));
    const e = pick(c, "closed c=4", "error_rate");
    expect(e.verdict).toBe("regressed");
    expect(e.delta_pp as number).toBeGreaterThan(15);
    expect(e.delta_pct).toBeNull();
    expect(c.gate.status).toBe("failed");
    expect(c.failed).toBe(true);
  });

  it("a level where every request failed: its TTFT rows regress with the reason, the gate fails", async () => {
    const r = rng(32);
    const repo = "acme/gate-vanished";
    const { token } = await history(
      repo,
      Array.from({ length: 6 }, () => runDocument(r, QUIET, 0, NO_CHANGE)),
    );
    const head = runDocument(r, QUIET, 0, NO_CHANGE);
    const l = head.levels[1]!;
    Object.assign(l, { ok: 0, errors: l.requests, errors_by_code: { http_500: l.requests } });
    l.output_tok_s = 0;
    l.total_tok_s = 0;
    l.req_s = 0;
    l.goodput_req_s = 0;
    l.completion_tokens_total = 0;
    l.prompt_tokens_total = 0;
    l.slo_pass_pct = 0;
    for (const k of [
      "ttft_ms",
      "itl_ms",
      "tpot_ms",
      "e2e_ms",
      "e2e_stream_ms",
      "decode_tok_s",
      "tokens_per_chunk",
    ] as const)
      l[k] = { n: 0, mean: null, min: null, max: null, p50: null, p90: null, p95: null, p99: null };
    l.finish_reasons = {};
    head.samples = head.samples!.filter((x) => x.level !== l.level);
    const c = await judgeHead(repo, token, head);
    expect(pick(c, "closed c=4", "ttft_p95_ms")).toMatchObject({
      verdict: "regressed",
      head: null,
      reason: "no value in the head: every request failed",
    });
    expect(c.gate.status).toBe("failed");
  });

  it("repeats that agree exactly: a +1.5 % change is not beyond noise (the figure's resolution is the floor)", async () => {
    const r = rng(35);
    const repo = "acme/gate-zero-variance";
    const one = runDocument(r, QUIET, 0, NO_CHANGE);
    const scaled = (k: number): ResultDocument => {
      const d = structuredClone(one);
      for (const l of d.levels) for (const q of ["p50", "p95", "p99"] as const) l.ttft_ms[q]! *= k;
      return { ...d, samples: undefined, repeats: [0, 1, 2].map((index) => ({ index, levels: d.levels })) };
    };
    const { token } = await history(repo, [scaled(1)]);
    const c = await judgeHead(repo, token, scaled(1.015));
    const row = pick(c, "closed c=4", "ttft_p50_ms");
    expect(row.method).toBe("repeats-t");
    expect(row.verdict).toBe("unchanged");
  });

  it("one slow run in twenty is left out, named; a 10 % throughput regression is still caught", async () => {
    const r = rng(33);
    const repo = "acme/gate-outlier";
    const docs = Array.from({ length: 20 }, () => runDocument(r, QUIET, 0, NO_CHANGE));
    for (const l of docs[7]!.levels) {
      l.output_tok_s *= 0.6;
      for (const k of ["p50", "p95", "p99"] as const) l.ttft_ms[k]! *= 1.6;
    }
    // slow in every request: its samples too (the service checks them against the figures)
    for (const x of docs[7]!.samples ?? [])
      if (x.measure.startsWith("ttft")) x.values = x.values.map((v) => v * 1.6);
    const { token, ids } = await history(repo, docs);
    const c = await judgeHead(repo, token, runDocument(r, QUIET, 0, { ttft: 0, tput: 0.1 }));
    expect(c.excluded).toContainEqual({ run: ids[7], reason: expect.stringMatching(/^an outlier run/) });
    expect(pick(c, "all levels", "output_tok_s").verdict).toBe("regressed");
    expect(c.gate.status).toBe("failed");
  });

  it("a run's invalid level leaves its own rows, not the run: a run with no valid level is not in a history that has valid runs", async () => {
    const r = rng(34);
    const repo = "acme/gate-invalid";
    const docs = Array.from({ length: 7 }, () => runDocument(r, QUIET, 0, NO_CHANGE));
    const clientBound = {
      status: "invalid" as const,
      reasons: [
        {
          code: "client_bound" as const,
          affects: ["latency", "rate", "slo"],
          figure: 90,
          bound: 20,
          text: "client-bound: …",
        },
      ],
    };
    // run 3: its c=4 level only; run 5: every level
    docs[3]!.levels[1]!.validity = clientBound;
    docs[3]!.validity = {
      status: "invalid",
      reasons: [{ level: 4, code: "client_bound", text: "client-bound: …" }],
    };
    for (const l of docs[5]!.levels) l.validity = clientBound;
    docs[5]!.validity = {
      status: "invalid",
      reasons: [{ level: 1, code: "client_bound", text: "client-bound: …" }],
    };
    const { token, ids } = await history(repo, docs);
    const c = await judgeHead(repo, token, runDocument(r, QUIET, 0, NO_CHANGE));
    // the service reads run 3 for its valid levels and never run 5 (runs.valid = 0)
    expect(c.baseline_runs).toHaveLength(6);
    expect(c.baseline_runs).toContain(ids[3]);
    expect(c.baseline_runs).not.toContain(ids[5]);
    expect(pick(c, "closed c=4", "output_tok_s").base_n).toBe(5);
    expect(pick(c, "closed c=1", "output_tok_s").base_n).toBe(6);
    // the base branch's trend: an invalid level's point moves no change point (points.valid = 0)
    const changes = (benchmark: string) =>
      json(
        call(
          `/api/v1/repos/${repo}/change-points?benchmark=${encodeURIComponent(benchmark)}&measure=output_tok_s`,
        ),
      );
    expect(await changes("closed c=4")).toMatchObject({ points: 5, invalid_left_out: 2 });
    expect(await changes("closed c=1")).toMatchObject({ points: 6, invalid_left_out: 1 });
  });
  it("a base branch whose runs have no valid level: judged on them and not judged, as an invalid base file is; the gate cannot judge", async () => {
    const r = rng(35);
    const repo = "acme/gate-none-valid";
    const docs = Array.from({ length: 2 }, () => runDocument(r, QUIET, 0, NO_CHANGE));
    for (const d of docs) {
      for (const l of d.levels) l.validity = invalidLevel("no_steady_state", "no steady state", 0.5, 1);
      d.validity = {
        status: "invalid",
        reasons: [{ level: 1, code: "no_steady_state", text: "no steady state" }],
      };
    }
    const { token } = await history(repo, docs);
    const c = await judgeHead(repo, token, runDocument(r, QUIET, 0, NO_CHANGE));
    expect(c.baseline_runs).toHaveLength(2);
    expect(c.gate.status).toBe("cannot_judge");
    expect(c.headline).toMatch(/^Gate cannot judge: .*base no steady state at c=1/);
    expect(pick(c, "closed c=1", "ttft_p95_ms")).toMatchObject({
      verdict: "not_judged",
      reason: "base no steady state (all 2 runs)",
    });
    expect(c.counts.no_baseline).toBe(0);
  });
});
