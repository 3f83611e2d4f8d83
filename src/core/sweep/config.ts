/**
 * The sweep's recorded configuration from the settings' values: mode-dependent defaults resolved,
 * every bound checked (a usage error naming the flag or input, never a clamp). The CLI and the
 * Action both build their `SweepConfig` here.
 */

import { UsageError } from "../../schema/errors.ts";
import type { SweepConfig } from "../../schema/v1.ts";
import { defaultsOf, type Values } from "../settings/setting.ts";
import { SWEEP } from "../settings/sweep-table.ts";
import { CONNECTION } from "../settings/table.ts";
import { parseToolWait } from "../workload/tool-waits.ts";
import { parseTier } from "./agent-capacity.ts";

export const DEFAULT_CLOSED_LEVELS = [1, 2, 4, 8];
export const DEFAULT_OPEN_LEVELS = [1, 2, 4];

import { minOf } from "../../shared/extremes.ts";
import { DEFAULT_REQUESTS } from "../load/level-plan.ts";
import { publicUrl, splitBaseUrls } from "../server/target.ts";

export { DEFAULT_REQUESTS };

type ConnectionValues = Values<typeof CONNECTION>;

/**
 * What one load generator can honestly do, and what keeps a run finite: beyond these a run only
 * piles up memory (10^9 users ran to 1.5 GB and ignored SIGTERM). A usage error, never a clamp.
 */
export const SWEEP_BOUNDS = {
  closedUsers: 10_000,
  openRateRps: 10_000,
  requestsPerLevel: 1_000_000,
  warmupRequests: 100_000,
  levels: 100,
};

/** A setting whose value passed a bound: the CLI names its flag, the Action its input. */
export class BoundError extends UsageError {
  constructor(
    readonly key: keyof typeof SWEEP,
    readonly problem: string,
  ) {
    super(`--${SWEEP[key].flag} ${problem}`, null);
  }
}

function checkBounds(v: Values<typeof SWEEP> & { api: string }, levels: number[]): void {
  const b = SWEEP_BOUNDS;
  if (v.thinkTimeMs !== 0 && v.turns === 1)
    throw new BoundError("thinkTimeMs", "goes with --turns T (the pause between a conversation's turns)");
  if (v.turns > 1 && v.mode !== "closed")
    throw new BoundError("turns", "needs --mode closed: each user holds one conversation at a time");
  if (v.traceSpeed !== 1 && v.trace === null) throw new BoundError("traceSpeed", "goes with --trace FILE");
  if (v.trace !== null) {
    if (v.mode === "search")
      throw new BoundError("trace", "replays the trace's own times; it cannot be searched");
    if (v.levels.length > 0)
      throw new BoundError(
        "trace",
        "sets the rate from the trace's own times: drop --levels (--trace-speed scales it)",
      );
    if (v.dataset !== null || v.turns > 1 || v.sharedPrefixTokens !== null)
      throw new BoundError(
        "trace",
        "brings its own prompts (lengths and shared blocks): it does not combine with --dataset, --turns or --shared-prefix-tokens",
      );
  }
  if (v.agentSessions !== null) {
    if (v.mode === "open")
      throw new BoundError(
        "agentSessions",
        "needs --mode closed (or search with --agent-tier): each user plays one session at a time",
      );
    if (v.mode === "search" && v.agentTier === null)
      throw new BoundError(
        "agentSessions",
        "with --mode search needs --agent-tier NAME:TTFT_P95_MS:TOK_S (what each session's calls must get)",
      );
    if (v.dataset !== null || v.trace !== null || v.turns > 1 || v.sharedPrefixTokens !== null)
      throw new BoundError(
        "agentSessions",
        "brings its own prompts and turns: it does not combine with --dataset, --trace, --turns or --shared-prefix-tokens",
      );
    if (v.rampUpS !== null)
      throw new BoundError("agentSessions", "starts every session at the level's start: drop --ramp-up-s");
  }
  if (v.toolWait !== "file" && v.agentSessions === null)
    throw new BoundError("toolWait", "goes with --agent-sessions FILE (the waits between its calls)");
  parseToolWait(v.toolWait);
  if (v.agentTier !== null && (v.mode !== "search" || v.agentSessions === null))
    throw new BoundError(
      "agentTier",
      "goes with --mode search and --agent-sessions FILE (the sessions whose capacity is searched)",
    );
  if (v.datasetReuse !== "tagged" && v.dataset === null)
    throw new BoundError("datasetReuse", "goes with --dataset FILE (how its prompts are reused)");
  if (v.toolChoice !== "auto" && v.tools === null)
    throw new BoundError("toolChoice", "goes with --tools FILE (the tools to choose from)");
  if (v.responsesChain && (v.api !== "responses" || v.turns < 2))
    throw new BoundError(
      "responsesChain",
      "goes with --api responses and --turns T (it names the previous turn's response)",
    );
  if (v.prefixGroups !== 1 && v.sharedPrefixTokens === null)
    throw new BoundError("prefixGroups", "goes with --shared-prefix-tokens N (the prefix each group shares)");
  if (levels.length > b.levels)
    throw new BoundError("levels", `takes at most ${b.levels} levels, got ${levels.length}`);
  if (v.mode === "closed") {
    const bad = levels.find((l) => !Number.isInteger(l) || l > b.closedUsers);
    if (bad !== undefined)
      throw new BoundError(
        "levels",
        `in closed loop are users: whole numbers up to ${b.closedUsers}, got ${bad} (for more load, run shards on several machines)`,
      );
  } else {
    const bad = levels.find((l) => l > b.openRateRps);
    if (bad !== undefined)
      throw new BoundError(
        "levels",
        `in open loop are request rates up to ${b.openRateRps} req/s, got ${bad}`,
      );
  }
  if (v.requests !== null && v.requests > b.requestsPerLevel)
    throw new BoundError("requests", `is at most ${b.requestsPerLevel} per level, got ${v.requests}`);
  if (v.duration !== null && v.duration > v.maxDurationS)
    throw new BoundError(
      "duration",
      `is at most ${v.maxDurationS} s per level (--max-duration-s), got ${v.duration}`,
    );
  // An open-loop level without --duration lasts its requests at its rate: 32 at 1e-9 req/s is a
  // thousand years of waiting, refused here rather than slept through.
  if (v.mode !== "closed" && v.duration === null && v.trace === null) {
    const requests = v.requests ?? DEFAULT_REQUESTS;
    const slowest = minOf(levels);
    const spanS = requests / slowest;
    if (spanS > v.maxDurationS)
      throw new BoundError(
        "levels",
        `at ${slowest} req/s with ${requests} requests a level would take ${spanS.toPrecision(3)} s, over --max-duration-s ${v.maxDurationS}: raise the rate, lower --requests, set --duration, or raise --max-duration-s`,
      );
  }
  if (v.warmup > b.warmupRequests)
    throw new BoundError("warmup", `is at most ${b.warmupRequests} requests, got ${v.warmup}`);
}

/** The sweep's recorded configuration from settings values (mode-dependent defaults resolved). */
export function sweepConfigOf(
  v: Values<typeof SWEEP>,
  c: Pick<ConnectionValues, "timeoutS" | "extraBody" | "headers" | "api" | "baseUrl" | "endpointStrategy">,
): SweepConfig {
  checkChoices(c.extraBody);
  const endpoints = splitBaseUrls(c.baseUrl);
  if (endpoints.length === 1 && c.endpointStrategy !== "round-robin")
    throw new UsageError(
      `--endpoint-strategy ${c.endpointStrategy} needs several servers: name them in --base-url, comma-separated`,
      "--endpoint-strategy",
    );
  const levels =
    v.levels.length > 0
      ? v.levels
      : v.mode === "closed"
        ? DEFAULT_CLOSED_LEVELS
        : v.mode === "search"
          ? [1]
          : DEFAULT_OPEN_LEVELS;
  checkBounds({ ...v, api: c.api }, levels);
  const tier = v.agentTier !== null ? parseTier(v.agentTier) : null;
  if (v.mode === "search") {
    if (
      tier === null &&
      v.sloTtftMs === null &&
      v.sloTpotMs === null &&
      v.sloE2eMs === null &&
      v.sloTtfatMs === null
    )
      throw new BoundError(
        "mode",
        "search needs an SLO to search under: --slo-ttft-ms, --slo-ttfat-ms, --slo-tpot-ms or --slo-e2e-ms",
      );
    if (v.levels.length > 1)
      throw new BoundError("levels", "with --mode search is one starting rate (the search picks the others)");
    if (tier !== null && v.duration === null)
      throw new BoundError(
        "agentTier",
        "needs --duration S: an agent-capacity probe runs its sessions for a time (a request count would cut them short)",
      );
  }
  if (v.repeats > 1 && v.mode === "search")
    throw new BoundError(
      "repeats",
      "cannot repeat a search (it decides its rates from the probes it ran): run the search once, then --repeats on a sweep at the rates it found",
    );
  return {
    // a trace is replayed open loop, at its own times (the level: its mean rate, set when it is read)
    // an agent-capacity search probes closed-loop levels of sessions
    mode: tier !== null ? "closed" : v.mode === "search" || v.trace !== null ? "open" : v.mode,
    ...(v.mode === "search"
      ? {
          search: {
            target_pass_pct: v.searchSloPassPct,
            max_probes: v.searchMaxProbes,
            ...(tier !== null ? { tier } : {}),
          },
        }
      : {}),
    levels,
    requests_per_level: v.requests ?? (v.duration === null ? DEFAULT_REQUESTS : null),
    ...(v.requests === null && v.duration === null ? { requests_default: true } : {}),
    duration_s: v.duration,
    warmup_requests: v.warmup,
    prompt_tokens: v.promptTokens,
    max_tokens: v.maxTokens,
    prompts: v.prompts,
    ignore_eos: v.ignoreEos,
    seed: v.seed,
    arrival: v.arrival,
    burstiness: v.burstiness,
    max_in_flight: v.maxInFlight,
    timeout_s: c.timeoutS,
    slo: {
      ttft_ms: v.sloTtftMs,
      tpot_ms: v.sloTpotMs,
      e2e_ms: v.sloE2eMs,
      ...(v.sloTtfatMs !== null ? { ttfat_ms: v.sloTtfatMs } : {}),
    },
    extra_body: c.extraBody,
    metrics_interval_ms: v.metricsIntervalMs === 0 ? null : v.metricsIntervalMs,
    header_names: Object.keys(c.headers),
    ...(v.rampUpS !== null ? { ramp_up_s: v.rampUpS } : {}),
    ...(v.sharedPrefixTokens !== null
      ? { shared_prefix: { tokens: v.sharedPrefixTokens, groups: v.prefixGroups } }
      : {}),
    ...(v.turns > 1 ? { sessions: { turns: v.turns, think_time_ms: v.thinkTimeMs } } : {}),
    ...(v.reasoningTags !== "off" ? { reasoning_tags: v.reasoningTags } : {}),
    ...(v.datasetReuse !== "tagged" ? { dataset_reuse: v.datasetReuse } : {}),
    ...(v.minSteadyS !== null ? { min_steady_s: v.minSteadyS } : {}),
    ...(v.clientLateFloorMs !== null ? { client_late_floor_ms: v.clientLateFloorMs } : {}),
    ...(v.responsesChain ? { responses_chain: true } : {}),
    ...(v.cancelShare !== null
      ? { cancel: { share: v.cancelShare, after_tokens: v.cancelAfterTokens } }
      : {}),
    // the method is the server's, known after the preflight (sweep/prepare.ts)
    ...(v.cacheReset !== "off" ? { cache_reset: { mode: v.cacheReset, method: null } } : {}),
    ...(v.repeats > 1 ? { repeats: v.repeats } : {}),
    ...(v.targetTokSPerUser.length > 0 ? { target_tok_s_per_user: v.targetTokSPerUser } : {}),
    ...(endpoints.length > 1
      ? { endpoints: { base_urls: endpoints.map(publicUrl), strategy: c.endpointStrategy } }
      : {}),
    ...(v.gpuSampleMs > 0
      ? {
          gpu_telemetry: {
            sample_ms: v.gpuSampleMs,
            gpus: v.gpus.length > 0 ? v.gpus : null,
            hour_cost_usd: v.gpuHourCost,
            // as it may be recorded: the sampler gets the URL as given (SweepSetup.gpuMetricsUrl)
            metrics_url: v.gpuMetricsUrl === null ? null : publicUrl(v.gpuMetricsUrl),
          },
        }
      : {}),
  };
}

/**
 * `n > 1` asks for several answers in one stream: every per-token figure would mix them (TPOT
 * halved at n = 2). Refused: run more requests instead.
 */
function checkChoices(extraBody: Record<string, unknown>): void {
  const n = extraBody.n;
  if (n !== undefined && n !== 1)
    throw new UsageError(
      `--extra-body asks for ${JSON.stringify(n)} choices per request (n): tokenbench measures one answer per stream (several would share its token timings); drop n, or raise --requests for more samples`,
      null,
    );
}

/** A complete sweep configuration with the table's defaults; override what you need. */
export function defaultSweepConfig(over: Partial<SweepConfig> = {}): SweepConfig {
  const { requests_default, ...defaults } = sweepConfigOf(defaultsOf(SWEEP), defaultsOf(CONNECTION));
  // a count given is not the default's: only the default's count adds 2 per user
  const byDefault = "requests_per_level" in over || "duration_s" in over ? {} : { requests_default };
  return { ...defaults, ...byDefault, ...over };
}

/** Two configurations measure the same thing (resume refuses to mix different ones). */
export function sameConfig(a: SweepConfig, b: SweepConfig): boolean {
  const strip = (c: SweepConfig) => JSON.stringify({ ...c, levels: undefined });
  return strip(a) === strip(b) && JSON.stringify(a.levels) === JSON.stringify(b.levels);
}
