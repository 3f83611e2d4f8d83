/**
 * A seeded model of the noise real CI has, as whole result documents (levels × every measure,
 * with the per-request samples the bootstrap reads), for measuring the verdict engine per pull
 * request (bench/verdict.ts; a coarse version in test/unit/shared/gate.test.ts):
 *   - a job effect shared by everything in one job (its runner, its GPU's state): a share `jobShare`
 *     of the run-to-run variance `noisePct`²;
 *   - per-repeat noise: the rest, drawn per repeat and level;
 *   - drift within a run: a linear trend over its levels;
 *   - skewed per-request latency (log-normal), and a request's inter-token
 *     gaps moving together (a per-request decode speed, then a small per-gap jitter);
 *   - a rare per-request error (0.2 %).
 * A closed-loop level of c users and R requests: TTFT and gaps per request, E2E = TTFT + gaps, the
 * wall time = requests / users × mean E2E, throughput = tokens / wall.
 */

import { summarize } from "../../src/core/results/stats.ts";
import type { LevelResult, ResultDocument } from "../../src/schema/v1.ts";
import { benchmarkName } from "../../src/shared/measures.ts";
import { rng } from "../../src/shared/random.ts";
import { documentSamples, thinned, thinnedGroups } from "../../src/shared/samples.ts";

export interface NoiseModel {
  /** Run-to-run coefficient of variation of a level's speed, %. */
  noisePct: number;
  /** Share of that variance shared by a whole job (0, 0.5, 0.8). */
  jobShare: number;
  levels: readonly number[];
  requests: number;
  tokens: number;
  /** Drift within a run: SD of the trend from the first level to the last, as a share of noisePct. */
  drift: number;
  errorRate: number;
}

export const DEFAULT_MODEL: NoiseModel = {
  noisePct: 3,
  jobShare: 0.5,
  levels: [1, 4, 16],
  requests: 120,
  tokens: 16,
  drift: 0.5,
  errorRate: 0.002,
};

/** What the head changed: its TTFT by (1 + ttft), its output tok/s by (1 − tput) (its gaps slower to match). */
export interface Change {
  ttft: number;
  tput: number;
}
export const NO_CHANGE: Change = { ttft: 0, tput: 0 };

export function gauss(r: () => number): number {
  const u = Math.max(r(), 1e-300);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

const TEMPLATE: Omit<ResultDocument, "levels"> = {
  schema_version: 1,
  kind: "sweep",
  tool: { name: "tokenbench", version: "model" },
  created_at: "2026-12-01T00:00:00.000Z",
  target: { base_url: "http://model", api: "chat", model: "m" },
  environment: {
    os: "x",
    arch: "x",
    cpu_model: null,
    cpu_count: 2,
    node_version: "v20",
    hostname: null,
    gpu: null,
  },
  clock: { source: "performance.now", origin_wall_time: "2026-12-01T00:00:00.000Z" },
  formulas: {},
  config: null,
  requests: null,
  complete: true,
};

const BASE_TTFT_MS = 40;
const BASE_ITL_MS = 8;

/** One level of one run: the run's log speed factor at it, the change, c users. */
function level(
  r: () => number,
  m: NoiseModel,
  c: number,
  logFactor: number,
  change: Change,
): { result: LevelResult; ttft: number[]; gaps: number[][] } {
  const ttft: number[] = [];
  const gaps: number[][] = [];
  const e2e: number[] = [];
  const tpot: number[] = [];
  const decode: number[] = [];
  let errors = 0;
  // Load: more users, longer TTFT (queueing) and slightly slower decode.
  const ttftBase = BASE_TTFT_MS * (1 + 0.15 * Math.log2(c)) * (1 + change.ttft);
  // Throughput is tokens over the level's wall time, which is the mean E2E (TTFT + the gaps): the
  // gaps grow so that the expected E2E grows by 1 / (1 − tput), so output tok/s falls by exactly
  // `tput` in expectation (slowing the gaps alone by that share would move it less, TTFT being
  // part of E2E). The expectations are the log-normals' means, exp(σ²/2).
  const itl0 = BASE_ITL_MS * (1 + 0.05 * Math.log2(c));
  const eTtft = ttftBase * Math.exp(0.3 ** 2 / 2);
  const eSpan = (m.tokens - 1) * itl0 * Math.exp(0.1 ** 2 / 2 + 0.05 ** 2 / 2);
  const itlBase = itl0 * (((eTtft + eSpan) / (1 - change.tput) - eTtft) / eSpan);
  for (let i = 0; i < m.requests; i++) {
    if (r() < m.errorRate) {
      errors++;
      continue;
    }
    // Log-normal: right-skewed, every moment finite (a mixture's tail at 5 % makes the p95 jump between modes).
    const t = ttftBase * Math.exp(logFactor + 0.3 * gauss(r));
    const speed = Math.exp(logFactor + 0.1 * gauss(r));
    const g: number[] = [];
    for (let k = 1; k < m.tokens; k++) g.push(itlBase * speed * Math.exp(0.05 * gauss(r)));
    const span = g.reduce((a, b) => a + b, 0);
    ttft.push(t);
    gaps.push(g);
    e2e.push(t + span);
    tpot.push(span / (m.tokens - 1));
    decode.push((m.tokens - 1) / (span / 1000));
  }
  const ok = ttft.length;
  const meanE2e = e2e.reduce((a, b) => a + b, 0) / Math.max(1, ok);
  const wallS = ((m.requests / c) * meanE2e) / 1000;
  const tokens = ok * m.tokens;
  const st = summarize;
  const result: LevelResult = {
    level: c,
    mode: "closed",
    concurrency: c,
    started_at_ms: 0,
    wall_time_s: wallS,
    requests: m.requests,
    ok,
    errors,
    errors_by_code: errors > 0 ? { http_500: errors } : {},
    warmup_requests: 0,
    prompt_tokens_total: ok * 64,
    completion_tokens_total: tokens,
    ttft_ms: st(ttft),
    itl_ms: st(gaps.flat()),
    tpot_ms: st(tpot),
    e2e_ms: st(e2e),
    e2e_stream_ms: st(e2e),
    decode_tok_s: st(decode),
    tokens_per_chunk: st(ttft.map(() => 1)),
    usage_chunk_mismatches: 0,
    output_tok_s: tokens / wallS,
    total_tok_s: (tokens + ok * 64) / wallS,
    req_s: ok / wallS,
    goodput_req_s: ok / wallS,
    slo_pass_pct: (100 * ok) / m.requests,
    peak_in_flight: c,
    finish_reasons: { length: ok },
    open_loop: null,
    client: {
      event_loop_delay_ms: { p50: 0.1, p99: 0.5, max: 1 },
      cpu_user_s: 0,
      cpu_system_s: 0,
      cpu_pct_of_one_core: 10,
      bottleneck_warning: null,
    },
    notices: [],
  };
  return { result, ttft, gaps };
}

/** One run of a job: its levels, with the per-request samples a file would give the bootstrap. */
export function runDocument(
  r: () => number,
  m: NoiseModel,
  jobEffect: number,
  change: Change,
  createdAt = TEMPLATE.created_at,
): ResultDocument {
  const sigma = m.noisePct / 100;
  const drift = gauss(r) * m.drift * sigma;
  const levels: LevelResult[] = [];
  const samples: NonNullable<ResultDocument["samples"]> = [];
  m.levels.forEach((c, k) => {
    const e = gauss(r) * Math.sqrt(1 - m.jobShare) * sigma;
    const trend = m.levels.length > 1 ? (drift * k) / (m.levels.length - 1) : 0;
    const lv = level(r, m, c, jobEffect + e + trend, change);
    levels.push(lv.result);
    const t = thinned(lv.ttft);
    for (const measure of ["ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms"])
      samples.push({ level: c, measure, values: t });
    const g = thinnedGroups(lv.gaps);
    for (const measure of ["itl_p50_ms", "itl_p95_ms"])
      samples.push({ level: c, measure, values: g.values, sizes: g.sizes });
  });
  return { ...TEMPLATE, created_at: createdAt, levels, samples };
}

/** A job's effect on everything it runs. */
export const jobEffect = (r: () => number, m: NoiseModel) =>
  gauss(r) * Math.sqrt(m.jobShare) * (m.noisePct / 100);

/** A job that ran the sweep `repeats` times: one document with its repeats (medians as its levels). */
export function repeatsDocument(
  r: () => number,
  m: NoiseModel,
  repeats: number,
  change: Change,
): ResultDocument {
  const j = jobEffect(r, m);
  const runs = Array.from({ length: repeats }, () => runDocument(r, m, j, change));
  const first = runs[0]!;
  return {
    ...first,
    samples: undefined,
    repeats: runs.map((d, index) => ({ index, levels: d.levels })),
  };
}

/** One A/B job: `pairs` pairs of blocks (base, head) in a seeded order, sharing the job's effect. */
export function abDocument(r: () => number, m: NoiseModel, pairs: number, change: Change): ResultDocument {
  const j = jobEffect(r, m);
  const blocks: NonNullable<ResultDocument["ab"]>["blocks"] = [];
  const pairIdx: NonNullable<ResultDocument["ab"]>["pairs"] = [];
  for (let p = 0; p < pairs; p++) {
    const order = r() < 0.5 ? (["base", "head"] as const) : (["head", "base"] as const);
    const at: Record<string, number> = {};
    for (const arm of order) {
      at[arm] = blocks.length;
      blocks.push({
        index: blocks.length,
        arm,
        pair: p,
        levels: runDocument(r, m, j, arm === "head" ? change : NO_CHANGE).levels,
      });
    }
    pairIdx.push({ base: at.base!, head: at.head! });
  }
  const heads = blocks.filter((b) => b.arm === "head");
  return {
    ...TEMPLATE,
    levels: heads[0]!.levels,
    ab: { base_target: { base_url: "http://base", model: "m" }, seed: 1, blocks, pairs: pairIdx },
  };
}

/** A base history of `n` jobs (one run each), oldest first, an hour apart. */
export function historyDocuments(
  r: () => number,
  m: NoiseModel,
  n: number,
): { id: string; doc: ResultDocument }[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `base-${i}`,
    doc: runDocument(r, m, jobEffect(r, m), NO_CHANGE, new Date(Date.UTC(2026, 10, 1, i)).toISOString()),
  }));
}

/** A level's validity when a reason voids its latency, rate and SLO rows (its errors still count). */
export function invalidLevel(
  code: "client_bound" | "no_steady_state",
  text: string,
  figure: number,
  bound: number,
): NonNullable<LevelResult["validity"]> {
  return { status: "invalid", reasons: [{ code, affects: ["latency", "rate", "slo"], figure, bound, text }] };
}

export { benchmarkName, documentSamples, rng };
