/**
 * Summarising one measured level: the latency and throughput aggregates, the open-loop schedule
 * figures, the client's self-check, the server's admission and the level's validity, side by
 * side. Pure: it reads what the loop and the samplers measured, as plain data.
 */

import type {
  LevelResult,
  MetricsSample,
  PromptCalibration,
  RequestRecord,
  SweepConfig,
} from "../../schema/v1.ts";
import { maxOf, minOf } from "../../shared/extremes.ts";
import type { HistogramSnapshot } from "../server/server-histograms.ts";
import { REPLAY_LAG_WARN_MS } from "../workload/trace.ts";
import { admissionSummary } from "./admission.ts";
import { jobSummary } from "./jobs.ts";
import {
  aggregateLevel,
  deriveRequest,
  type LevelAggregate,
  openLoopStats,
  peakInFlight,
} from "./metrics.ts";
import { clientNotice, shortOutputText } from "./notices.ts";
import { levelQueueDelta, serverMeans } from "./server-means.ts";
import { summarize } from "./stats.ts";
import { steadyWindow, windowRates } from "./steady.ts";
import { e2eSplit, tpotSplit, ttftSplit } from "./ttft-split.ts";
import { levelReasons, levelValidity, streamBuffering } from "./validity.ts";

/** What a level's loop measured (load/loops.ts's LevelRun), as this summary reads it. */
export interface LevelRun {
  records: RequestRecord[];
  droppedArrivals: number;
  drainTimeS: number | null;
}

/** What the /metrics sampler read over the level (server/metrics-sampler.ts), as this summary reads it. */
export interface MetricsReading {
  samples: MetricsSample[];
  available: boolean;
  scrapes: number;
  failures: number;
  lastError: string | null;
  /** Each scrape's per-request histograms and cache counters. */
  snapshots: HistogramSnapshot[];
}

export function openLoopSummary(
  cfg: SweepConfig,
  level: number,
  run: LevelRun,
  arrival: SweepConfig["arrival"] = cfg.arrival,
): LevelResult["open_loop"] {
  if (cfg.mode !== "open") return null;
  const ol = openLoopStats(run.records);
  const sends = run.records.map((r) => r.send_ms);
  const spanS = sends.length > 1 ? (maxOf(sends) - minOf(sends)) / 1000 : 0;
  return {
    arrival,
    burstiness: cfg.burstiness,
    target_rate_rps: level,
    achieved_rate_rps: spanS > 0 ? (sends.length - 1) / spanS : null,
    schedule_lag_ms: ol.lag,
    late_arrivals: ol.lateArrivals,
    dropped_arrivals: run.droppedArrivals,
    drain_time_s: run.drainTimeS,
    ttft_from_intended_ms: ol.ttftFromIntended,
    e2e_from_intended_ms: ol.e2eFromIntended,
  };
}

/** Of the prompt tokens the server counted, the share it reported cached (when it reports cache hits). */
function cachedShare(ok: readonly RequestRecord[]): { cached_tokens_pct?: number | null } {
  let prompt = 0;
  let cached = 0;
  let known = false;
  for (const r of ok) {
    const u = r.usage;
    if (!u || u.prompt_tokens === null || u.cached_tokens === null) continue;
    known = true;
    prompt += u.prompt_tokens;
    cached += u.cached_tokens;
  }
  return known ? { cached_tokens_pct: prompt > 0 ? (100 * cached) / prompt : null } : {};
}

/** Successful requests by the finish reason the server gave ("none": it gave none). */
function finishReasons(ok: readonly RequestRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of ok) {
    const k = r.finish_reason ?? "none";
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** `--turns`: per turn index, TTFT and the prompt the server counted and reported cached. */
export function turnSummaries(ok: readonly RequestRecord[]): NonNullable<LevelResult["turns"]> {
  const byTurn = new Map<number, RequestRecord[]>();
  for (const r of ok) {
    if (r.turn === undefined) continue;
    const rs = byTurn.get(r.turn);
    if (rs) rs.push(r);
    else byTurn.set(r.turn, [r]);
  }
  return [...byTurn.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([turn, rs]) => ({
      turn,
      ok: rs.length,
      ttft_ms: summarize(rs.map((r) => deriveRequest(r).ttftMs).filter((x): x is number => x !== null)),
      prompt_tokens: summarize(
        rs.map((r) => r.usage?.prompt_tokens).filter((x): x is number => typeof x === "number"),
      ),
      cached_tokens_pct: cachedShare(rs).cached_tokens_pct ?? null,
    }));
}

export interface LevelSummaryInput {
  cfg: SweepConfig;
  level: number;
  run: LevelRun;
  warmupRequests: number;
  client: LevelResult["client"];
  /** The level's /metrics timeline, or null when sampling is off. */
  sampler: MetricsReading | null;
  limits: { maxRunningRequests: number | null; cudaGraphMaxBs: number | null };
  notices: string[];
  /** Open loop: the arrival process this level used (a search's bracket: constant). */
  arrival?: SweepConfig["arrival"];
  /** The prompts' sizing (its template overhead is the prefix every prompt shares), if any. */
  calibration?: PromptCalibration | null;
}

/** The mean max_tokens the successful requests asked (null: none succeeded). */
function askedMean(ok: readonly RequestRecord[]): number | null {
  const asked = ok.map((r) => r.max_tokens).filter((t): t is number => t !== null);
  return asked.length > 0 ? asked.reduce((a, t) => a + t, 0) / asked.length : null;
}

/**
 * What a workload shares is the server's template, any --shared-prefix-tokens, and for a dataset
 * the system prompts several of its lines open with (its `shared_share` of the prompt): a level
 * whose cached prompt tokens pass that by more than 10 % of its prompts (16 tokens at least, a
 * cache block) was served by a cache the workload did not imply (another run's prompts, a
 * warmup). A trace, a conversation and an agent's session share by design (their blocks, their
 * history): not judged.
 */
function cacheBeyondWorkload(input: LevelSummaryInput, ok: readonly RequestRecord[]): string | null {
  const cfg = input.cfg;
  if (cfg.trace || cfg.sessions || cfg.agent_sessions) return null;
  const rows = ok.filter((r) => r.usage?.cached_tokens != null && r.usage.prompt_tokens != null);
  if (rows.length === 0) return null;
  const mean = (f: (r: RequestRecord) => number) => rows.reduce((a, r) => a + f(r), 0) / rows.length;
  const cached = mean((r) => r.usage!.cached_tokens!);
  const prompt = mean((r) => r.usage!.prompt_tokens!);
  const fromDataset = (cfg.dataset?.shared_share ?? 0) * prompt;
  const implied = Math.round(
    (cfg.shared_prefix?.tokens ?? 0) +
      Math.max(0, input.calibration?.template_overhead_tokens ?? 0) +
      fromDataset,
  );
  if (cached <= implied + Math.max(16, 0.1 * prompt)) return null;
  const what = [
    "template",
    cfg.shared_prefix ? "shared prefix" : null,
    fromDataset > 0 ? "the dataset's shared system prompts" : null,
  ]
    .filter(Boolean)
    .join(", ");
  return `cached tokens the workload did not ask for: the server reported ${cached.toFixed(0)} of ${prompt.toFixed(0)} prompt tokens cached on average, far above the ${implied} this workload shares (${what}); a cache this run did not fill served it (an earlier run of the same prompts?): restart the server or reset its prefix cache before the run (--cache-reset sweep)`;
}

/**
 * A steady level's headline: latency figures from the requests wholly inside its window, rates
 * from the window; the counts (requests, errors, tokens) stay the whole level's, as recorded.
 */
function steadyFigures(
  whole: LevelAggregate,
  inside: LevelAggregate,
  rates: ReturnType<typeof windowRates>,
): LevelAggregate {
  const latency = {
    ttft_ms: inside.ttft_ms,
    itl_ms: inside.itl_ms,
    tpot_ms: inside.tpot_ms,
    e2e_ms: inside.e2e_ms,
    e2e_stream_ms: inside.e2e_stream_ms,
    decode_tok_s: inside.decode_tok_s,
    tokens_per_chunk: inside.tokens_per_chunk,
    slo_pass_pct: inside.slo_pass_pct,
    ...(whole.ttfat_ms ? { ttfat_ms: inside.ttfat_ms ?? whole.ttfat_ms } : {}),
    ...(whole.reasoning_ms ? { reasoning_ms: inside.reasoning_ms ?? whole.reasoning_ms } : {}),
    ...(whole.reasoning_tokens
      ? { reasoning_tokens: inside.reasoning_tokens ?? whole.reasoning_tokens }
      : {}),
    ...(whole.answer_tokens ? { answer_tokens: inside.answer_tokens ?? whole.answer_tokens } : {}),
    ...(whole.tt_first_tool_call_ms
      ? { tt_first_tool_call_ms: inside.tt_first_tool_call_ms ?? whole.tt_first_tool_call_ms }
      : {}),
  };
  return { ...whole, ...latency, ...rates };
}

/** The level's result and the notices to show (each notice once, in the order they arose). */
export function summariseLevel(input: LevelSummaryInput): { result: LevelResult; notices: string[] } {
  const { cfg, level } = input;
  // Streams the client aborted on purpose (--cancel-share) are in no figure: counted apart.
  const aborted = input.run.records.filter((r) => !r.warmup && r.error?.code === "cancelled").length;
  const run =
    aborted > 0
      ? { ...input.run, records: input.run.records.filter((r) => r.error?.code !== "cancelled") }
      : input.run;
  const notices = [...input.notices];
  const aggOf = (records: readonly RequestRecord[]) =>
    aggregateLevel({
      level,
      mode: cfg.mode,
      concurrency: cfg.mode === "closed" ? level : null,
      records,
      warmupRequests: input.warmupRequests,
      slo: cfg.slo,
    });
  const whole = aggOf(run.records);
  const window = steadyWindow(run.records, {
    mode: cfg.mode,
    level,
    minSteadyS: cfg.min_steady_s ?? null,
    arrival: input.arrival ?? cfg.arrival,
    burstiness: cfg.burstiness,
  });
  const agg = window.steady
    ? steadyFigures(
        whole,
        aggOf(window.inside),
        windowRates(run.records, window, cfg.slo, cfg.mode === "open"),
      )
    : whole;
  if (!window.steady && whole.requests > 0)
    notices.push(
      `level ${level}: no steady state (${window.reason}): its figures include the ramp and the drain; more --requests or a --duration gives it one`,
    );
  const client = clientNotice(input.client);
  if (client !== null) notices.push(`level ${level}: ${client}`);
  const measured = run.records.filter((r) => !r.warmup);
  if (agg.short_output)
    notices.push(`level ${level}: ${shortOutputText(measured, agg.short_output, agg.ok, cfg)}`);
  const beyond = cacheBeyondWorkload(
    input,
    measured.filter((r) => r.error === null),
  );
  if (beyond !== null) notices.push(`level ${level}: ${beyond}`);
  const reused = measured.filter((r) => r.prompt_reuse !== undefined);
  if (reused.length > 0 && cfg.dataset)
    notices.push(
      reused[0]!.prompt_reuse === "exact"
        ? `level ${level}: ${reused.length} of ${measured.length} prompts were reused exactly (every one of the dataset's ${cfg.dataset.lines} lines had been sent; --dataset-reuse exact): the server's cache may serve them`
        : `level ${level}: ${reused.length} of ${measured.length} prompts were reused (every one of the dataset's ${cfg.dataset.lines} lines had been sent), each with a unique tag ahead of it so the cache cannot serve a repeat; a bigger dataset avoids reuse`,
    );
  // Orders the grammar allows but that leave a figure undefined: said, the figure left out.
  const answeredFirst = measured.filter(
    (r) =>
      r.first_reasoning_ms != null && r.first_answer_ms != null && r.first_answer_ms < r.first_reasoning_ms,
  ).length;
  if (answeredFirst > 0)
    notices.push(
      `level ${level}: ${answeredFirst} response(s) sent answer text before their reasoning: their reasoning time is left out (no span to measure), their time to first answer token is the first answer's`,
    );
  const usageIgnored = measured.filter((r) => r.reasoning_usage_ignored !== undefined);
  if (usageIgnored.length > 0)
    notices.push(
      `level ${level}: ${usageIgnored.length} response(s) reported more reasoning tokens in their usage (${usageIgnored[0]!.reasoning_usage_ignored}) than their whole completion: the stream's own count of reasoning tokens is used`,
    );
  const afterDone = measured.filter((r) => r.events_after_done !== undefined).length;
  if (afterDone > 0)
    notices.push(
      `level ${level}: ${afterDone} stream(s) sent events after their end (data: [DONE]); they were not counted`,
    );
  const ok = run.records.filter((r) => !r.warmup && r.error === null && r.usage !== null);
  const counted = (xs: (number | null | undefined)[]) =>
    summarize(xs.filter((x): x is number => typeof x === "number"));
  let result: LevelResult = {
    ...agg,
    steady_state: {
      steady: window.steady,
      window_start_ms: window.startMs,
      window_end_ms: window.endMs,
      window_s: window.windowS,
      min_steady_s: window.minSteadyS,
      requests_inside: window.inside.length,
      before_window: window.ramp,
      after_window: window.drain,
      completed_rps: window.completedRps,
      ...(window.fellBehind ? { fell_behind: true } : {}),
      reason: window.reason,
    },
    prompt_tokens: counted(ok.map((r) => r.usage!.prompt_tokens)),
    cached_tokens: counted(ok.map((r) => r.usage!.cached_tokens)),
    open_loop: openLoopSummary(cfg, level, run, input.arrival ?? cfg.arrival),
    ...(cfg.ramp_up_s ? { ramp_requests: run.records.filter((r) => r.ramp).length } : {}),
    ...cachedShare(ok),
    ...(cfg.sessions
      ? {
          turns: turnSummaries(ok),
          jobs: jobSummary(run.records, cfg.sessions.turns, level, whole.wall_time_s),
        }
      : cfg.agent_sessions
        ? { jobs: jobSummary(run.records, null, level, whole.wall_time_s) }
        : {}),
    finish_reasons: finishReasons(ok),
    ...(cfg.cancel
      ? { cancelled: { requests: aborted, after_tokens: cfg.cancel.after_tokens, release: null } }
      : {}),
    client: input.client,
    notices: notices.map((n) => n.replace(`level ${level}: `, "")),
  };
  const lagP99 = result.open_loop?.schedule_lag_ms.p99 ?? null;
  if (cfg.trace && lagP99 !== null && lagP99 > REPLAY_LAG_WARN_MS)
    notices.push(
      `level ${level}: replay lag p99 ${lagP99.toFixed(1)} ms is over ${REPLAY_LAG_WARN_MS} ms: requests left later than the trace's times, so its bursts were smoothed; check the client's self-check (CPU) or replay slower with --trace-speed`,
    );
  const resent = run.records.filter((r) => r.retries !== undefined).length;
  if (resent > 0)
    notices.push(
      `level ${level}: ${resent} request(s) went out on a kept-alive connection the server had already closed and were sent again on a new one (none lost); the client no longer reuses this server's connections`,
    );
  if (agg.errors > 0) {
    const first = new Map<string, string>();
    for (const r of run.records)
      if (!r.warmup && r.error !== null && !first.has(r.error.code)) first.set(r.error.code, r.error.message);
    const codes = Object.entries(agg.errors_by_code)
      .map(([c, n]) => `${c}=${n} (first: ${(first.get(c) ?? "").slice(0, 160)})`)
      .join("; ");
    notices.push(`level ${level}: ${agg.errors} of ${agg.requests} requests failed: ${codes}`);
  }
  const s = input.sampler;
  if (s !== null) {
    const queueDelta = levelQueueDelta(s.snapshots);
    const admission = admissionSummary({
      level: result,
      records: run.records as RequestRecord[],
      samples: s.samples,
      metricsAvailable: s.available,
      scrapeFailures: { failures: s.failures, scrapes: s.scrapes, lastError: s.lastError },
      queueDelta,
      limits: input.limits,
      window: window.steady ? { startMs: window.startMs!, endMs: window.endMs! } : null,
    });
    const means = serverMeans(
      s.snapshots,
      window.steady ? { startMs: window.startMs!, endMs: window.endMs! } : null,
    );
    result = { ...result, admission, ...(means ? { server_means: means } : {}), metrics_timeline: s.samples };
    for (const n of admission.notes) notices.push(`level ${level}: ${n}`);
  }
  const inside = window.steady ? window.inside : run.records;
  const late = input.client.event_loop_delay_ms.p50;
  const split = ttftSplit(inside, result.ttft_ms, late);
  if (split) result.ttft_split = split;
  const e2e = e2eSplit(inside, result.e2e_ms, late);
  if (e2e) result.e2e_split = e2e;
  const tpot = tpotSplit(inside, result.tpot_ms);
  if (tpot) result.tpot_split = tpot;
  // Streams that came in one piece or in bursts: their per-token figures withheld, said once.
  const buffered = streamBuffering(run.records as RequestRecord[]);
  if (buffered !== null) {
    for (const k of buffered.withhold) result[k] = withheld(result[k]);
    notices.push(
      `level ${level}: ${buffered.reason.text}: ${buffered.withhold.join(", ").replace(/_ms|_tok_s/g, "")} withheld`,
    );
  }
  // users busy: in flight, or in the wait the workload puts before a call (a tool's run, a later
  // turn's think time), so waiting agents are not read as users the client failed to run
  const think = cfg.sessions?.think_time_ms ?? 0;
  const busy = peakInFlight(measured, (r) => r.tool_wait_ms ?? ((r.turn ?? 1) > 1 ? think : 0));
  result.validity = levelValidity([
    ...levelReasons(result, cfg, beyond, askedMean(ok) ?? cfg.max_tokens, busy),
    ...(buffered ? [buffered.reason] : []),
  ]);
  return { result, notices };
}

/** A figure withheld: its count kept, its values null (a value of 0 would read as a measurement). */
function withheld<T extends { n: number }>(s: T): T {
  const out = { ...s } as Record<string, unknown>;
  for (const k of Object.keys(out)) if (k !== "n") out[k] = null;
  return out as T;
}
