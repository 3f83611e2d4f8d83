/**
 * The per-request histograms a server exports on `/metrics` (time queued, in prefill, in decode,
 * to first token, end to end) and its prefix-cache counters, read from one scrape as running sums
 * and counts. Two scrapes' difference is what the requests between them spent, on average, in
 * each phase: the server's own mean split of a level (results/server-means.ts). Pure.
 */
import type { PromSample } from "./prometheus.ts";

export type ServerPhase = "queue" | "prefill" | "decode" | "ttft" | "e2e";

/** Each phase's histogram (seconds) by engine, first match wins. */
export const PHASE_HISTOGRAMS: Record<ServerPhase, readonly string[]> = {
  queue: [
    "vllm:request_queue_time_seconds",
    "sglang:queue_time_seconds",
    "freetoken:request_queue_time_seconds",
    "tgi_request_queue_duration",
  ],
  // vLLM's PREFILL phase: scheduled to first token
  prefill: ["vllm:request_prefill_time_seconds"],
  // vLLM's DECODE phase: first token to last
  decode: ["vllm:request_decode_time_seconds"],
  ttft: [
    "vllm:time_to_first_token_seconds",
    "sglang:time_to_first_token_seconds",
    "freetoken:time_to_first_token_seconds",
  ],
  e2e: ["vllm:e2e_request_latency_seconds", "sglang:e2e_request_latency_seconds", "tgi_request_duration"],
};

/** Prefix-cache lookups and hits, in tokens (vLLM v1's counters). */
const CACHE_COUNTERS = {
  queries: ["vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries"],
  hits: ["vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits"],
} as const;

export interface RunningSum {
  /** Seconds, summed over the requests observed so far. */
  sum: number;
  count: number;
}

/** One scrape's histograms and counters (summed over the servers of a run with several). */
export interface HistogramSnapshot {
  /** When the scrape was taken, ms on the run's clock (as the /metrics timeline's `t_ms`). */
  t_ms: number;
  phases: Partial<Record<ServerPhase, RunningSum>>;
  cache: { queries: number; hits: number } | null;
}

/** The sum of every sample of the first of `names` the scrape has (all its label sets), or null. */
function total(samples: readonly PromSample[], names: readonly string[]): number | null {
  for (const n of names) {
    let found = false;
    let sum = 0;
    for (const s of samples)
      if (s.name === n && Number.isFinite(s.value)) {
        found = true;
        sum += s.value;
      }
    if (found) return sum;
  }
  return null;
}

export function histogramSnapshot(tMs: number, samples: readonly PromSample[]): HistogramSnapshot {
  const phases: HistogramSnapshot["phases"] = {};
  for (const [phase, names] of Object.entries(PHASE_HISTOGRAMS) as [ServerPhase, readonly string[]][])
    for (const n of names) {
      const sum = total(samples, [`${n}_sum`]);
      const count = total(samples, [`${n}_count`]);
      if (sum === null || count === null) continue;
      phases[phase] = { sum, count };
      break;
    }
  const queries = total(samples, CACHE_COUNTERS.queries);
  const hits = total(samples, CACHE_COUNTERS.hits);
  return { t_ms: tMs, phases, cache: queries !== null && hits !== null ? { queries, hits } : null };
}

/**
 * Several servers' snapshots at one instant as one: a phase or the cache only where every server
 * has it (a sum over some of them would be no server's and not the system's).
 */
export function combineSnapshots(tMs: number, each: readonly HistogramSnapshot[]): HistogramSnapshot {
  const phases: HistogramSnapshot["phases"] = {};
  for (const phase of Object.keys(PHASE_HISTOGRAMS) as ServerPhase[]) {
    const xs = each.map((s) => s.phases[phase]);
    if (xs.length > 0 && xs.every((x) => x !== undefined))
      phases[phase] = {
        sum: xs.reduce((a, x) => a + x!.sum, 0),
        count: xs.reduce((a, x) => a + x!.count, 0),
      };
  }
  const cs = each.map((s) => s.cache);
  const cache =
    cs.length > 0 && cs.every((c) => c !== null)
      ? { queries: cs.reduce((a, c) => a + c!.queries, 0), hits: cs.reduce((a, c) => a + c!.hits, 0) }
      : null;
  return { t_ms: tMs, phases, cache };
}
