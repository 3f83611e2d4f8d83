/**
 * `--mode search --agent-sessions FILE --agent-tier NAME:TTFT_P95_MS:TOK_S`: agent capacity, the
 * most concurrent sessions whose calls meet a tier (TTFT p95 at most the tier's, and a median
 * output speed per user of at least the tier's). Tiers are declared per model, as the serving
 * market sets them (there is no model-free number). Each probe is a closed-loop level of that
 * many sessions; the count doubles from the start until a probe fails (or halves until one
 * passes), then the bracket is bisected to one session or 3 %. Pure: the next probe is a
 * function of the probes so far, so a resumed search continues where it stopped.
 */
import { UsageError } from "../../schema/errors.ts";
import type { LevelResult, ResultDocument, SweepConfig } from "../../schema/v1.ts";
import { maxOf, minOf } from "../../shared/extremes.ts";
import { clientOnlyLateMs } from "../results/validity.ts";

export type Tier = NonNullable<NonNullable<SweepConfig["search"]>["tier"]>;
type AgentCapacity = NonNullable<NonNullable<ResultDocument["saturation"]>["agents"]>;

/** `NAME:TTFT_P95_MS:TOK_S`, e.g. `interactive:2000:60`. */
export function parseTier(s: string): Tier {
  const m = /^([a-z][a-z0-9_-]{0,31}):(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/i.exec(s.trim());
  const ttft = m ? Number(m[2]) : Number.NaN;
  const speed = m ? Number(m[3]) : Number.NaN;
  if (!m || !(ttft > 0) || !(speed > 0))
    throw new UsageError(
      `--agent-tier must be NAME:TTFT_P95_MS:TOK_S_PER_USER (e.g. interactive:2000:60: TTFT p95 at most 2,000 ms and at least 60 output tok/s per user), got "${s}"`,
      "--agent-tier",
    );
  return { name: m[1]!.toLowerCase(), ttft_p95_ms: ttft, tok_s_per_user: speed };
}

/** A probe's errors beyond this share fail it: sessions that fail are no sessions served. */
const MAX_ERROR_SHARE = 0.01;
/** Stop when the bracket is this narrow (relative), or one session wide. */
const PRECISION = 0.03;

export interface SessionsProbe {
  sessions: number;
  pass: boolean;
  /** Failed while its client was the bottleneck: the server may have met the tier. */
  clientBound?: boolean;
}

/**
 * A probe as the tier judges it, by what it delivered: a valid level (steady, the client not the
 * bottleneck) whose TTFT p95 and median output speed per user meet the tier, with at most 1 %
 * of its calls failed. A level invalid only because its client read late still passes when the
 * tier holds with that lateness charged against it: lateness only adds to a TTFT, and a first
 * token read up to L ms late shortens a request's decode span by at most L, so its speed is at
 * least (n − 1) / (span + L). A pass so charged is a pass on the server; a client-bound probe
 * that misses the tier fails (the answer is never above what was shown) and says so
 * (`clientBound`).
 */
export function tierProbe(l: LevelResult, tier: Tier): SessionsProbe {
  const late = clientOnlyLateMs(l);
  const clientOnly = late !== null;
  const valid = l.validity?.status !== "invalid" || clientOnly;
  const lateMs = late ?? 0;
  const steady = l.steady_state === undefined || l.steady_state.steady;
  const ttft = l.ttft_ms.p95;
  const decodeTokens = l.ok > 0 ? l.completion_tokens_total / l.ok - 1 : 0;
  const measured = l.decode_tok_s.p50;
  const speed =
    measured === null || lateMs === 0
      ? measured
      : decodeTokens > 0
        ? 1 / (1 / measured + lateMs / (1000 * decodeTokens))
        : 0;
  const failed = l.errors / Math.max(1, l.ok + l.errors);
  const pass =
    valid &&
    steady &&
    ttft !== null &&
    ttft <= tier.ttft_p95_ms &&
    speed !== null &&
    speed >= tier.tok_s_per_user &&
    failed <= MAX_ERROR_SHARE;
  return { sessions: l.level, pass, ...(clientOnly && !pass ? { clientBound: true } : {}) };
}

function bracket(probes: readonly SessionsProbe[]): { lo: number | null; hi: number | null } {
  const fails = probes.filter((p) => !p.pass).map((p) => p.sessions);
  const hi = fails.length > 0 ? minOf(fails) : null;
  const passes = probes.filter((p) => p.pass && (hi === null || p.sessions < hi)).map((p) => p.sessions);
  return { lo: passes.length > 0 ? maxOf(passes) : null, hi };
}

/** The session count of the next probe, or null when the search is done. */
export function nextSessions(
  probes: readonly SessionsProbe[],
  o: { start: number; maxProbes: number },
): number | null {
  if (probes.length >= o.maxProbes) return null;
  if (probes.length === 0) return Math.max(1, Math.round(o.start));
  const { lo, hi } = bracket(probes);
  if (hi === null) return maxOf(probes.map((p) => p.sessions)) * 2;
  if (lo === null) {
    const least = minOf(probes.map((p) => p.sessions));
    return least <= 1 ? null : Math.floor(least / 2);
  }
  if (hi - lo <= 1 || (hi - lo) / hi <= PRECISION) return null;
  return Math.floor((lo + hi) / 2);
}

/** The outcome: the most sessions that passed under the lowest that failed, per GPU and per kW. */
export function agentCapacityOf(levels: readonly LevelResult[], tier: Tier): AgentCapacity {
  const { lo, hi } = bracket(levels.map((l) => tierProbe(l, tier)));
  const at = lo === null ? undefined : levels.find((l) => l.level === lo);
  // the GPUs the telemetry read at that level, and their mean power over its window
  const gpus = at?.gpu?.per_gpu.length ?? null;
  const watts = at?.gpu?.mean_power_w ?? null;
  return {
    tier,
    max_sessions: lo ?? 0,
    bracket_sessions: [lo, hi],
    ttft_p95_ms_at_max: at?.ttft_ms.p95 ?? null,
    tok_s_per_user_at_max: at?.decode_tok_s.p50 ?? null,
    per_gpu: lo !== null && gpus !== null && gpus > 0 ? lo / gpus : null,
    per_kw: lo !== null && watts !== null && watts > 0 ? lo / (watts / 1000) : null,
  };
}

export const AGENT_SEARCH_METHOD = `closed-loop probes of agents' sessions (a probe's level is its concurrent sessions): the count doubles from the start until a probe fails (or halves until one passes), then the bracket between the most sessions that passed and the fewest that failed is bisected until it is one session or ${PRECISION * 100} % wide, or the probes run out; a probe passes when it is valid (a steady window, the client not the bottleneck, or only the client late by L ms and the tier met with L charged: TTFT as read, decode speed as (n − 1) / (span + L)), its TTFT p95 is at most the tier's, its median output speed per user (decode tok/s) at least the tier's, and at most ${MAX_ERROR_SHARE * 100} % of its calls failed; the answer is the most sessions that passed under the fewest that failed`;
