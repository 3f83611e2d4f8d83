/**
 * `--cancel-share`: a server can free what aborted streams held in its own account and still be
 * slower after them (a decode nobody reads left running: its /slots and /metrics say free). A
 * probe before the level and one after it, each a few short requests one at a time, compares
 * the time to first token the server gives an idle request then and now.
 */
import { performance } from "node:perf_hooks";
import { percentileSorted } from "../../shared/statistics.ts";
import type { StreamClient } from "../client/stream-client.ts";
import { makePrompt } from "../workload/prompts.ts";

/** Requests per probe: the median of nine sequential ones (their spread is the probe's own noise). */
export const PROBE_REQUESTS = 9;
const PROBE_WORDS = 16;
/** Probe request ids: far above any level's (shard.ts strides levels by 10^7), never recorded. */
const PROBE_ID_BASE = 2_000_000_000;
let nextProbe = 0;

export interface TtftProbe {
  /** Median TTFT of the probe's requests, ms; null when none answered. */
  median_ms: number | null;
  /** Its requests' spread: the interquartile range, ms (a first request's connection set-up is no noise of the server's). */
  spread_ms: number | null;
  /** Requests that got no first token (an error, a timeout). */
  failed: number;
}

export async function ttftProbe(client: StreamClient, level: number, seed: number): Promise<TtftProbe> {
  const ttfts: number[] = [];
  let failed = 0;
  for (let k = 0; k < PROBE_REQUESTS; k++) {
    const id = PROBE_ID_BASE + nextProbe++;
    const r = await client.stream({
      id,
      level,
      warmup: true,
      // a unique tag first: nothing of it is cached, before the level or after it
      prompt: makePrompt(PROBE_WORDS, seed, id + Math.floor(performance.timeOrigin), 0),
      maxTokens: 1,
      promptTokensRequested: null,
      intendedSendAbsMs: null,
    });
    if (r.error === null && r.first_token_ms !== null) ttfts.push(r.first_token_ms - r.send_ms);
    else failed++;
  }
  if (ttfts.length === 0) return { median_ms: null, spread_ms: null, failed };
  const sorted = Float64Array.from(ttfts).sort();
  const q = (p: number) => percentileSorted(sorted, p)!;
  return { median_ms: q(0.5), spread_ms: q(0.75) - q(0.25), failed };
}

/**
 * How much slower the probe after the level may be before it says the server kept something:
 * the probe before it's own spread (interquartile) or a tenth of its median, whichever is more, plus the client's
 * lateness bound over the level (what the client itself may add to a reading).
 */
export function probeBoundMs(before: TtftProbe, latenessBoundMs: number | null): number | null {
  if (before.median_ms === null || before.spread_ms === null) return null;
  return Math.max(before.spread_ms, 0.1 * before.median_ms) + (latenessBoundMs ?? 0);
}
