/**
 * Per-level aggregates, from the per-request formulas of shared/formulas.ts (each written once,
 * its text copied into every document's `formulas`; CONCEPTS.md explains them).
 */
import type { LevelResult, RequestRecord, SloConfig, Stats } from "../../schema/v1.ts";
import { deriveRequest, itlGapsOf, meetsSlo } from "../../shared/formulas.ts";
import { summarize } from "./stats.ts";

export { type Derived, deriveRequest, FORMULAS, meetsSlo } from "../../shared/formulas.ts";

/**
 * The most measured requests between send and end at any instant; with `waitBefore`, each from
 * the start of the deliberate wait before it (a tool's run, a user's think time): the users busy.
 */
export function peakInFlight(
  records: readonly RequestRecord[],
  waitBefore: (r: RequestRecord) => number = () => 0,
): number {
  // Sort by time; ties: end before start, so back-to-back requests do not overlap.
  const pairs = records.flatMap((r) => [
    { t: r.send_ms - waitBefore(r), d: 1 },
    { t: r.end_ms ?? r.send_ms, d: -1 },
  ]);
  pairs.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let peak = 0;
  for (const p of pairs) {
    cur += p.d;
    if (cur > peak) peak = cur;
  }
  return peak;
}

export interface LevelAggregateInput {
  level: number;
  mode: "closed" | "open";
  concurrency: number | null;
  records: readonly RequestRecord[];
  warmupRequests: number;
  slo: SloConfig;
}

export type LevelAggregate = Omit<
  LevelResult,
  "open_loop" | "client" | "notices" | "admission" | "metrics_timeline"
>;

export function aggregateLevel(input: LevelAggregateInput): LevelAggregate {
  const recs = input.records.filter((r) => !r.warmup);
  const openLoop = input.mode === "open";
  const derived = recs.map(deriveRequest);
  const ttft: number[] = [];
  const itl: number[] = [];
  const tpot: number[] = [];
  const e2e: number[] = [];
  const e2eStream: number[] = [];
  const decode: number[] = [];
  const tpc: number[] = [];
  const ttfat: number[] = [];
  const reasoningMs: number[] = [];
  const reasoningTokens: number[] = [];
  const answerTokens: number[] = [];
  const ttTool: number[] = [];
  let reasoned = 0;
  let toolCalls = 0;
  let usedTools = 0;
  let shortOutput = 0;
  const errorsByCode: Record<string, number> = {};
  let ok = 0;
  let promptTotal = 0;
  let completionTotal = 0;
  let sloPass = 0;
  let mismatches = 0;
  let firstSend = Number.POSITIVE_INFINITY;
  let lastEnd = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < recs.length; i++) {
    const r = recs[i]!;
    const d = derived[i]!;
    if (r.send_ms < firstSend) firstSend = r.send_ms;
    const end = r.end_ms ?? r.send_ms;
    if (end > lastEnd) lastEnd = end;
    if (!d.ok) {
      const code = r.error!.code;
      errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
      continue;
    }
    ok++;
    promptTotal += r.usage?.prompt_tokens ?? 0;
    const ct = r.usage?.completion_tokens ?? 0;
    completionTotal += ct;
    if (d.ttftMs !== null) ttft.push(d.ttftMs);
    const et = r.event_times_ms;
    itlGapsOf(r, itl);
    if (d.tpotMs !== null) tpot.push(d.tpotMs);
    if (d.e2eMs !== null) e2e.push(d.e2eMs);
    if (d.e2eStreamMs !== null) e2eStream.push(d.e2eStreamMs);
    if (d.decodeTokS !== null) decode.push(d.decodeTokS);
    if (d.tokensPerChunk !== null) tpc.push(d.tokensPerChunk);
    if (ct !== et.length) mismatches++;
    if (d.ttfatMs !== null) ttfat.push(d.ttfatMs);
    if (r.reasoning_tokens !== undefined) {
      reasoned++;
      reasoningTokens.push(r.reasoning_tokens);
      answerTokens.push(r.answer_tokens ?? ct - r.reasoning_tokens);
    }
    if (d.reasoningMs !== null) reasoningMs.push(d.reasoningMs);
    if (d.ttFirstToolCallMs !== null) {
      usedTools++;
      ttTool.push(d.ttFirstToolCallMs);
      toolCalls += r.tool_calls ?? 0;
    }
    if (r.short_output === true) shortOutput++;
    if (meetsSlo(d, input.slo, openLoop)) sloPass++;
  }
  const wallS = recs.length > 0 ? Math.max(0, lastEnd - firstSend) / 1000 : 0;
  const per = (x: number) => (wallS > 0 ? x / wallS : 0);
  const anySlo =
    input.slo.ttft_ms !== null ||
    input.slo.tpot_ms !== null ||
    input.slo.e2e_ms !== null ||
    input.slo.ttfat_ms != null;
  // Reasoning and tool figures only where a response reasoned or called a tool: elsewhere TTFAT is TTFT.
  const streamShapes = {
    ...(reasoned > 0 || reasoningMs.length > 0
      ? {
          ttfat_ms: summarize(ttfat),
          reasoning_ms: summarize(reasoningMs),
          reasoning_tokens: summarize(reasoningTokens),
          answer_tokens: summarize(answerTokens),
        }
      : {}),
    ...(usedTools > 0 ? { tt_first_tool_call_ms: summarize(ttTool), tool_calls_total: toolCalls } : {}),
    ...(shortOutput > 0 ? { short_output: shortOutput } : {}),
  };
  return {
    level: input.level,
    mode: input.mode,
    concurrency: input.concurrency,
    started_at_ms: Number.isFinite(firstSend) ? firstSend : 0,
    wall_time_s: wallS,
    requests: recs.length,
    ok,
    errors: recs.length - ok,
    errors_by_code: errorsByCode,
    warmup_requests: input.warmupRequests,
    prompt_tokens_total: promptTotal,
    completion_tokens_total: completionTotal,
    ttft_ms: summarize(ttft),
    itl_ms: summarize(itl),
    tpot_ms: summarize(tpot),
    e2e_ms: summarize(e2e),
    e2e_stream_ms: summarize(e2eStream),
    decode_tok_s: summarize(decode),
    tokens_per_chunk: summarize(tpc),
    usage_chunk_mismatches: mismatches,
    output_tok_s: per(completionTotal),
    total_tok_s: per(promptTotal + completionTotal),
    req_s: per(ok),
    goodput_req_s: per(anySlo ? sloPass : ok),
    slo_pass_pct: recs.length > 0 ? (100 * (anySlo ? sloPass : ok)) / recs.length : null,
    peak_in_flight: peakInFlight(recs),
    ...streamShapes,
  };
}

export function openLoopStats(records: readonly RequestRecord[]): {
  lag: Stats;
  ttftFromIntended: Stats;
  e2eFromIntended: Stats;
  lateArrivals: number;
} {
  const lag: number[] = [];
  const ti: number[] = [];
  const ei: number[] = [];
  let late = 0;
  for (const r of records) {
    if (r.warmup) continue;
    const d = deriveRequest(r);
    if (d.scheduleLagMs !== null) {
      lag.push(d.scheduleLagMs);
      if (d.scheduleLagMs > LATE_THRESHOLD_MS) late++;
    }
    if (!d.ok) continue;
    if (d.ttftFromIntendedMs !== null) ti.push(d.ttftFromIntendedMs);
    if (d.e2eFromIntendedMs !== null) ei.push(d.e2eFromIntendedMs);
  }
  return {
    lag: summarize(lag),
    ttftFromIntended: summarize(ti),
    e2eFromIntended: summarize(ei),
    lateArrivals: late,
  };
}

/** An arrival sent more than this after its intended time counts as late. */
export const LATE_THRESHOLD_MS = 1;
