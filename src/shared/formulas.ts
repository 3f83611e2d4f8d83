/**
 * The formulas of tokenbench, each written once with its text beside its code: the text is copied
 * into every result document (`formulas`) and CONCEPTS.md explains it; the code is what the
 * level aggregates (core/results/metrics.ts), the bootstrap's samples (shared/samples.ts) and the
 * serving profile use. Pure: the results service runs it too.
 */
import { PHYSICS } from "../schema/upload.ts";
import type { RequestRecord, SloConfig } from "../schema/v1.ts";

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
  decode_tok_s: `(usage.completion_tokens - 1) / ((last content event - first content event) / 1000), per request; none where that passes ${PHYSICS.decodeTokS} tok/s (the tokens came in one read, not as decoded)`,
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
    // A span shorter than any stream decodes in is the tokens of one read (a client reading late,
    // a buffering proxy): no decode was timed, and the service would refuse the figure.
    const rate = span > 0 ? (ct - 1) / (span / 1000) : null;
    decodeTokS = rate !== null && rate <= PHYSICS.decodeTokS ? rate : null;
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
    // Answer text before any reasoning (a leading "\n" is enough) leaves no span to measure.
    reasoningMs:
      r.first_reasoning_ms != null && r.first_answer_ms != null && r.first_answer_ms >= r.first_reasoning_ms
        ? r.first_answer_ms - r.first_reasoning_ms
        : null,
    ttFirstToolCallMs: r.first_tool_call_ms !== undefined ? r.first_tool_call_ms - r.send_ms : null,
  };
}

/** A request's inter-token gaps (the `itl_ms` formula): every gap between consecutive content events. */
export function itlGapsOf(r: Pick<RequestRecord, "event_times_ms">, out: number[]): void {
  const et = r.event_times_ms;
  for (let k = 1; k < et.length; k++) out.push(et[k]! - et[k - 1]!);
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
