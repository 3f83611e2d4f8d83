/** Parts of a level result in schema v1: the client's self-check, the /metrics timeline, admission. */
import { z } from "zod";
import { nullableNum, num } from "./common.ts";

export const ClientSelfCheck = z.object({
  event_loop_delay_ms: z.object({ p50: nullableNum, p99: nullableNum, max: nullableNum }),
  /**
   * How long requests waited in the client before reaching the socket: send_ms - dispatch_ms, or
   * send_ms - connected_ms when the request opened its own connection (connecting is not queueing).
   */
  send_queue_ms: z.object({ p50: nullableNum, p99: nullableNum, max: nullableNum }).optional(),
  /**
   * An upper bound on how late the client read what the server sent (ms), from the longest event
   * loop turns of the level: see CONCEPTS.md. Stated with every warning.
   */
  lateness_bound_ms: nullableNum.optional(),
  /**
   * The part of each event-loop delay sample during which the client's loop was busy (its own
   * work, garbage collection included), rather than waiting to be woken: see CONCEPTS.md.
   */
  own_delay_ms: z.object({ p50: nullableNum, p99: nullableNum, max: nullableNum }).optional(),
  cpu_user_s: num,
  cpu_system_s: num,
  cpu_pct_of_one_core: num,
  /** The client read late because of its own load: its figures are inflated by up to the bound. */
  bottleneck_warning: z.string().nullable(),
  /**
   * The client read late while it was not loaded (the machine woke it late): up to the bound of
   * the figures is the machine's timing noise, not the server's. Absent in older documents.
   */
  timing_note: z.string().nullable().optional(),
  /**
   * With worker threads (`--workers`): each thread's own check. A thread's figures are its own
   * event loop's (busy_pct: event-loop utilization); the level's cpu_* are the whole process's.
   */
  shards: z
    .array(
      z.object({
        /** `k/n`, 1-based: the thread among the runner's threads. */
        thread: z.string(),
        requests: z.number().int().nonnegative(),
        event_loop_delay_ms: z.object({ p50: nullableNum, p99: nullableNum, max: nullableNum }),
        lateness_bound_ms: nullableNum,
        busy_pct: num,
        bottleneck_warning: z.string().nullable(),
      }),
    )
    .optional(),
});

/** Server `/metrics` gauges sampled during a level (the timeline of `--metrics-interval-ms`). */
export const MetricsSample = z.object({
  t_ms: num,
  running: nullableNum,
  waiting: nullableNum,
  kv_cache_usage_pct: nullableNum,
  /** Metrics tokenbench does not map (histogram series excluded), kept as scraped. */
  raw: z.record(z.string(), num).optional(),
});

export const AdmissionSummary = z.object({
  /** Whether the server exposed enough (running/waiting gauges) to tell admitted from queued. */
  observable: z.boolean(),
  source: z.enum(["metrics", "server_queue_time", "none"]),
  offered_concurrency: nullableNum,
  max_running_requests: nullableNum,
  cuda_graph_max_bs: nullableNum,
  admitted_concurrency_max: nullableNum,
  queued_requests_max: nullableNum,
  kv_cache_usage_pct_max: nullableNum,
  /** Mean per-request server queue time over the level, from the server's queue-time histogram. */
  server_queue_time_mean_ms: nullableNum,
  metrics_samples: z.number().int().nonnegative(),
  littles_law: z
    .object({
      implied_in_flight: nullableNum,
      observed_in_flight_mean: nullableNum,
      server_running_mean: nullableNum,
      server_waiting_mean: nullableNum,
    })
    .nullable(),
  /** Why the curve bent at this level, as far as the evidence says. */
  bend_reasons: z.array(z.enum(["server_queue", "kv_full", "scheduler_cap", "client_queueing"])),
  notes: z.array(z.string()),
});

export type AdmissionSummary = z.infer<typeof AdmissionSummary>;
export type MetricsSample = z.infer<typeof MetricsSample>;

/**
 * A level's steady-state window (src/core/results/steady.ts). Steady: the headline figures
 * (latency percentiles from requests wholly inside it, rates from what happened in it) are the
 * window's. Not steady: they are the whole level's, ramp and drain included, and `reason` says why.
 */
export const SteadyState = z.object({
  steady: z.boolean(),
  window_start_ms: z.number().nullable(),
  window_end_ms: z.number().nullable(),
  window_s: z.number().nonnegative(),
  min_steady_s: z.number().nonnegative(),
  requests_inside: z.number().int().nonnegative(),
  /** Started before the window (the ramp), ended after it (the drain): counted, kept, not in the headline. */
  before_window: z.number().int().nonnegative(),
  after_window: z.number().int().nonnegative(),
  /** Open loop: requests finished inside the window per second. */
  completed_rps: z.number().nonnegative().nullable(),
  /** Open loop: fewer requests finished in the window than arrived, beyond the arrival noise (the queue grew). */
  fell_behind: z.boolean().optional(),
  reason: z.string(),
});

const gpuFigures = {
  energy_j: nullableNum,
  mean_power_w: nullableNum,
  peak_power_w: nullableNum,
  idle_power_w: nullableNum,
};

/**
 * A level's GPU energy and cost (src/core/results/energy.ts, CONCEPTS.md §14): whole-GPU energy
 * over the steady window, summed over the server's GPUs, and per GPU. Absent without telemetry;
 * `energy_j` null with `unknown_reason` when the sampler died or sampled too sparsely.
 */
export const LevelGpu = z.object({
  source: z.string(),
  energy_method: z.enum(["counter", "integrated"]).nullable(),
  window: z.enum(["steady", "level"]),
  window_s: num,
  ...gpuFigures,
  output_tok_per_j: nullableNum,
  j_per_output_tok: nullableNum,
  j_per_request: nullableNum,
  w_per_user: nullableNum,
  usd_per_m_output_tok: nullableNum,
  usd_per_m_total_tok: nullableNum,
  per_gpu: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      uuid: z.string().nullable(),
      name: z.string().nullable(),
      samples: z.number().int().nonnegative(),
      ...gpuFigures,
      util_pct_mean: nullableNum,
      mem_used_max_mib: nullableNum,
      sm_clock_mhz_mean: nullableNum,
      temp_max_c: nullableNum,
    }),
  ),
  unknown_reason: z.string().nullable(),
  /** A read set aside for being impossible (an energy counter against the power reads), with why. */
  note: z.string().nullable().optional(),
});

/**
 * Why a level's figures are not what they claim (src/core/results/validity.ts, CONCEPTS.md
 * "Valid runs"): the rule's code, the figure and the bound it broke, in words, and which measures
 * it leaves without a verdict (families of shared/measures.ts, or measure names).
 */
export const ValidityReason = z.object({
  code: z.enum([
    "client_bound",
    "no_steady_state",
    "fell_behind",
    "error_rate",
    "short_output",
    "cache_unasked",
    "too_few_samples",
    "load_shape",
    "telemetry_gap",
    "buffered_stream",
    "leak",
  ]),
  affects: z.array(z.string().max(64)).max(64),
  figure: z.number().nullable(),
  bound: z.number().nullable(),
  text: z.string().max(1000),
});
export type ValidityReason = z.infer<typeof ValidityReason>;

/** A level is valid, or invalid with its reasons (a reason of some rows only leaves it valid). */
export const LevelValidity = z.object({
  status: z.enum(["valid", "invalid"]),
  reasons: z.array(ValidityReason).max(32),
});
export type LevelValidity = z.infer<typeof LevelValidity>;

/** A run is valid when every level is; its reasons name their level. */
export const RunValidity = z.object({
  status: z.enum(["valid", "invalid"]),
  reasons: z
    .array(z.object({ level: z.number(), code: ValidityReason.shape.code, text: z.string().max(1000) }))
    .max(256),
});

const nullableMs = z.number().nonnegative().nullable();

/** `--base-url A,B`: one server's part of a level (its measured requests, not the warmup). */
export const EndpointFigures = z.object({
  base_url: z.string(),
  requests: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  /** Of the level's measured requests, the share sent to this server, %. */
  requests_pct: z.number().min(0).max(100),
  output_tokens: z.number().int().nonnegative(),
  /** Its output tokens per second, taken as the level's (its steady window, else its wall time): the servers' sum is the level's. */
  output_tok_s: z.number().nonnegative(),
  ttft_p50_ms: nullableMs,
  ttft_p95_ms: nullableMs,
  e2e_p50_ms: nullableMs,
  e2e_p95_ms: nullableMs,
  /** Its own /metrics over the level: mean requests running and waiting, mean KV usage (null: it said none). */
  metrics: z
    .object({
      running_mean: nullableNum,
      waiting_mean: nullableNum,
      kv_cache_usage_pct_mean: nullableNum,
    })
    .nullable(),
});
export type EndpointFigures = z.infer<typeof EndpointFigures>;

/** `--base-url A,B`: the level per server, and how evenly the work was spread. */
export const LevelEndpoints = z.object({
  strategy: z.enum(["round-robin", "least-in-flight"]),
  /** The busiest server's output tokens over an even share, minus 1 (0: even; 0.5: 1.5 times an even share); null without tokens. */
  imbalance: z.number().nonnegative().nullable(),
  by_endpoint: z.array(EndpointFigures).min(2),
});
export type LevelEndpoints = z.infer<typeof LevelEndpoints>;

/** `--cancel-share`: a probe's TTFT (the median of a few idle requests) before the level and after its release check. */
export const CancelProbe = z.object({
  before_ms: z.number().nonnegative().nullable(),
  after_ms: z.number().nonnegative().nullable(),
  /** How much slower after may be: the before probe's interquartile range or a tenth of its median, whichever is more, plus the client's lateness bound. */
  bound_ms: z.number().nonnegative().nullable(),
});
export type CancelProbe = z.infer<typeof CancelProbe>;

/** One TTFT percentile's parts (their sum is the percentile): its band's mean shares, scaled to it. */
const TtftParts = z.object({
  /** Requests in the band the parts are read from (ranks 40–60 % for p50, 90–100 % for p95). */
  n: z.number().int().nonnegative(),
  /** The time before the server began the prompt, less the client's part: its queue and the transport. */
  queue_ms: nullableNum,
  /** The server's own prompt time (llama.cpp `timings.prompt_ms`): prefill and the first token. */
  prefill_ms: nullableNum,
  /** The client's median lateness in reading what arrived (its self-check), at most what was left. */
  client_ms: nullableNum,
  /** The band's mean prompt tokens the server processed (not served from its cache), where it said. */
  uncached_tokens: nullableNum,
});

/**
 * TTFT split into queue, prefill and client (core/results/ttft-split.ts), from the server's own
 * per-request prefill time where its stream carries one: absent where it says nothing.
 */
export const TtftSplit = z.object({
  source: z.literal("server_timings"),
  /** Successful requests of the level's window whose stream carried the server's prompt time. */
  requests: z.number().int().nonnegative(),
  p50: TtftParts,
  p95: TtftParts,
});

/** One E2E percentile's parts (their sum is the percentile): TTFT's, and the server's decode. */
const E2eParts = TtftParts.extend({
  /** The server's own decode time (llama.cpp `timings.predicted_ms`): first token to last. */
  decode_ms: nullableNum,
  /** The client's lateness at the first token, plus the stream's time beyond the server's decode. */
  client_ms: nullableNum,
});

/** E2E split into queue, prefill, decode and client, from the server's per-request timings. */
export const E2eSplit = TtftSplit.extend({ p50: E2eParts, p95: E2eParts });

/** TPOT p50 split into the server's own time per output token and the client's (the rest). */
export const TpotSplit = z.object({
  source: z.literal("server_timings"),
  requests: z.number().int().nonnegative(),
  p50: z.object({
    n: z.number().int().nonnegative(),
    /** The server's decode time (llama.cpp `timings.predicted_ms`) over the output tokens after the first. */
    decode_ms: nullableNum,
    /** TPOT less that: the client reading late and the transport. */
    client_ms: nullableNum,
  }),
});

/** `--cancel-share`: the streams the client aborted (in no figure) and whether the server freed them. */
export const LevelCancelled = z.object({
  requests: z.number().int().nonnegative(),
  after_tokens: z.number().int().positive(),
  release: z
    .object({
      source: z.enum(["slots", "metrics"]).nullable(),
      freed_s: z.number().nonnegative().nullable(),
      busy: z.number().int().nonnegative().nullable(),
    })
    .nullable(),
  probe: CancelProbe.nullable().optional(),
});

/**
 * The server's own mean time per phase of the requests it finished over the level's window
 * (core/results/server-means.ts), from its `/metrics` histograms: the difference of their sums
 * and counts between the scrapes around the window. A mean split, not per request; a phase the
 * server exports no histogram for is null.
 */
export const ServerMeans = z.object({
  source: z.literal("metrics"),
  /** "steady": the scrapes around the steady window; "level": the level's first and last scrape. */
  window: z.enum(["steady", "level"]),
  /** The scrapes the difference is taken between, ms on the run's clock (as the timeline's `t_ms`). */
  from_ms: z.number(),
  to_ms: z.number(),
  /** Requests the server counted between them (its end-to-end, else TTFT, else queue histogram). */
  requests: z.number().nonnegative(),
  /** Waiting for a slot (vLLM's WAITING phase, SGLang's queue time). */
  queue_ms: nullableNum,
  /** Scheduled to first token (vLLM's PREFILL phase). */
  prefill_ms: nullableNum,
  /** First token to last (vLLM's DECODE phase). */
  decode_ms: nullableNum,
  /** The server's own time to first token and end to end, as its histograms say. */
  ttft_ms: nullableNum,
  e2e_ms: nullableNum,
  /** Prompt tokens its prefix cache served of those it looked up between the scrapes (vLLM's counters). */
  prefix_cache_hit_pct: z.number().min(0).max(100).nullable(),
});
export type ServerMeans = z.infer<typeof ServerMeans>;
