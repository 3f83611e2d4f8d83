/**
 * Per-request derived figures and per-level aggregates. Every formula here is written out in
 * FORMULAS (copied into each result document) and in CONCEPTS.md.
 */
import type { LevelResult, RequestRecord, SloConfig, Stats } from "../../schema/v1.ts";
import { summarize } from "./stats.ts";

export const FORMULAS: Record<string, string> = {
  clock: "all *_ms timestamps: performance.now() (monotonic) minus the run origin, in milliseconds",
  ttft_ms:
    "first content event receive time - actual send time; a content event carries any generated text: reasoning, answer or tool call",
  ttfat_ms:
    "first answer event (content or tool call after any reasoning; --reasoning-tags think: after </think>) - actual send time",
  reasoning_ms: "first answer event - first reasoning event, requests that reasoned",
  reasoning_tokens:
    "usage.completion_tokens_details.reasoning_tokens where the server sends it; else reasoning events when completion_tokens is at most content events + 1 (one token per event, the end-of-sequence token unsent), else round(reasoning events * completion_tokens / content events)",
  answer_tokens: "usage.completion_tokens - reasoning_tokens",
  tt_first_tool_call_ms: "first tool-call event (name or arguments delta) - actual send time",
  short_output:
    "with ignore_eos: successful requests whose completion_tokens < max_tokens and that said stop or came under 90 % of max_tokens",
  itl_ms: "every gap between consecutive content events of a request, pooled over requests",
  tpot_ms:
    "(last content event - first content event) / (usage.completion_tokens - 1), requests with completion_tokens >= 2",
  e2e_ms: "last content event - actual send time",
  e2e_stream_ms: "end of stream (response end) - actual send time",
  decode_tok_s:
    "(usage.completion_tokens - 1) / ((last content event - first content event) / 1000), per request",
  tokens_per_chunk: "usage.completion_tokens / number of content events, per request",
  output_tok_s: "sum of usage.completion_tokens over successful requests / level wall time",
  total_tok_s:
    "sum of (usage.prompt_tokens + usage.completion_tokens) over successful requests / level wall time",
  req_s: "successful requests / level wall time",
  wall_time_s: "last measured request end - first measured request send (warmup excluded)",
  goodput_req_s: "successful requests meeting every configured SLO / level wall time",
  slo_pass_pct: "100 * requests meeting every SLO / all measured requests (errors count as misses)",
  slo_basis: "closed loop: TTFT/E2E from actual send; open loop: from intended send (queue-inclusive)",
  ttft_from_intended_ms:
    "open loop: first content event - intended send time (includes client-side queueing)",
  e2e_from_intended_ms: "open loop: last content event - intended send time",
  schedule_lag_ms: "open loop: actual send time - intended send time",
  percentile: "linear interpolation between closest ranks (Hyndman-Fan type 7) on raw samples",
  latency_population: "latency statistics use successful, non-warmup requests only",
  peak_in_flight: "maximum number of measured requests between send and end at any instant",
  littles_law_implied_in_flight: "sum of E2E (stream) times / level wall time",
};

export interface Derived {
  ok: boolean;
  ttftMs: number | null;
  e2eMs: number | null;
  e2eStreamMs: number | null;
  tpotMs: number | null;
  decodeTokS: number | null;
  tokensPerChunk: number | null;
  ttftFromIntendedMs: number | null;
  e2eFromIntendedMs: number | null;
  scheduleLagMs: number | null;
  /** Time to first answer token: TTFT when the response did not reason first. */
  ttfatMs: number | null;
  reasoningMs: number | null;
  ttFirstToolCallMs: number | null;
}

export function deriveRequest(r: RequestRecord): Derived {
  const ok = r.error === null;
  const first = r.first_token_ms;
  const last = r.last_token_ms;
  const ct = r.usage?.completion_tokens ?? null;
  const ttftMs = first !== null ? first - r.send_ms : null;
  const e2eMs = last !== null ? last - r.send_ms : null;
  const e2eStreamMs = r.end_ms !== null ? r.end_ms - r.send_ms : null;
  let tpotMs: number | null = null;
  let decodeTokS: number | null = null;
  if (first !== null && last !== null && ct !== null && ct >= 2) {
    const span = last - first;
    tpotMs = span / (ct - 1);
    decodeTokS = span > 0 ? (ct - 1) / (span / 1000) : null;
  }
  const events = r.event_times_ms.length;
  const tokensPerChunk = ct !== null && events > 0 ? ct / events : null;
  const intended = r.intended_send_ms;
  const answer = r.first_answer_ms === undefined ? first : r.first_answer_ms;
  return {
    ok,
    ttftMs,
    e2eMs,
    e2eStreamMs,
    tpotMs,
    decodeTokS,
    tokensPerChunk,
    ttftFromIntendedMs: intended !== null && first !== null ? first - intended : null,
    e2eFromIntendedMs: intended !== null && last !== null ? last - intended : null,
    scheduleLagMs: intended !== null ? r.send_ms - intended : null,
    ttfatMs: answer !== null ? answer - r.send_ms : null,
    reasoningMs:
      r.first_reasoning_ms != null && r.first_answer_ms != null
        ? r.first_answer_ms - r.first_reasoning_ms
        : null,
    ttFirstToolCallMs: r.first_tool_call_ms !== undefined ? r.first_tool_call_ms - r.send_ms : null,
  };
}

/** Does a successful request meet every configured SLO? */
export function meetsSlo(d: Derived, slo: SloConfig, openLoop: boolean): boolean {
  if (!d.ok) return false;
  const ttft = openLoop ? (d.ttftFromIntendedMs ?? d.ttftMs) : d.ttftMs;
  const e2e = openLoop ? (d.e2eFromIntendedMs ?? d.e2eMs) : d.e2eMs;
  if (slo.ttft_ms !== null && (ttft === null || ttft > slo.ttft_ms)) return false;
  if (slo.tpot_ms !== null && d.tpotMs !== null && d.tpotMs > slo.tpot_ms) return false;
  if (slo.e2e_ms !== null && (e2e === null || e2e > slo.e2e_ms)) return false;
  if (slo.ttfat_ms != null) {
    // open loop: from the intended send, as TTFT is
    const lag = openLoop ? (d.scheduleLagMs ?? 0) : 0;
    if (d.ttfatMs === null || d.ttfatMs + lag > slo.ttfat_ms) return false;
  }
  return true;
}

export function peakInFlight(records: readonly RequestRecord[]): number {
  // Sort by time; ties: end before start, so back-to-back requests do not overlap.
  const pairs = records.flatMap((r) => [
    { t: r.send_ms, d: 1 },
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
    for (let k = 1; k < et.length; k++) itl.push(et[k]! - et[k - 1]!);
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
