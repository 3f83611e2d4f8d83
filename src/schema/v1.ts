/**
 * Schema v1: the one contract the harness writes, the Action uploads and the results service stores.
 * This file is the single source: `schema/result-v1.schema.json` is generated from it
 * (`npm run schema`), and every writer and reader validates with `parseResultDocument`.
 * Wire names are snake_case and carry their unit.
 */

import { z } from "zod";
import { nullableNum, num } from "./common.ts";
import { PromptCalibration, SweepConfig } from "./config.ts";
import {
  ConsistencyRecord,
  Frontier,
  GpuTelemetry,
  LoadGenerator,
  Saturation,
  SentSamples,
  Startup,
  VerdictRules,
} from "./document-parts.ts";
import { TokenbenchError } from "./errors.ts";
import {
  AdmissionSummary,
  ClientSelfCheck,
  E2eSplit,
  LevelCancelled,
  LevelEndpoints,
  LevelGpu,
  LevelValidity,
  MetricsSample,
  RunValidity,
  ServerMeans,
  SteadyState,
  TpotSplit,
  TtftSplit,
} from "./level-parts.ts";
import { Profile } from "./profile.ts";
import { RequestRecord } from "./request-record.ts";

export { RequestError } from "./common.ts";
export * from "./config.ts";
export type { ConsistencyRecord, GpuSampleRecord } from "./document-parts.ts";
export * from "./level-parts.ts";
export * from "./profile.ts";
export * from "./request-record.ts";

export const SCHEMA_VERSION = 1 as const;

/** Summary statistics over raw samples; percentiles by the method named in `formulas.percentile`. */
export const Stats = z.object({
  n: z.number().int().nonnegative(),
  mean: nullableNum,
  min: nullableNum,
  max: nullableNum,
  p50: nullableNum,
  p90: nullableNum,
  p95: nullableNum,
  p99: nullableNum,
});
export type Stats = z.infer<typeof Stats>;

/** A measured quantity: never negative (a latency, a rate, a count of tokens). */
const nonNeg = z.number().nonnegative();
const nullableNonNeg = nonNeg.nullable();
/** Stats of a measured quantity: every figure non-negative. */
export const MeasuredStats = z.object({
  n: z.number().int().nonnegative(),
  mean: nullableNonNeg,
  min: nullableNonNeg,
  max: nullableNonNeg,
  p50: nullableNonNeg,
  p90: nullableNonNeg,
  p95: nullableNonNeg,
  p99: nullableNonNeg,
});

export const OpenLoopSummary = z.object({
  arrival: z.enum(["poisson", "constant", "gamma"]),
  burstiness: num,
  target_rate_rps: num,
  achieved_rate_rps: nullableNum,
  schedule_lag_ms: Stats,
  late_arrivals: z.number().int().nonnegative(),
  dropped_arrivals: z.number().int().nonnegative(),
  drain_time_s: nullableNum,
  ttft_from_intended_ms: Stats,
  e2e_from_intended_ms: Stats,
});

/** One turn index of multi-turn sessions: its successful requests' TTFT, prompt and cache share. */
export const TurnSummary = z.object({
  turn: z.number().int().positive(),
  ok: z.number().int().nonnegative(),
  ttft_ms: MeasuredStats,
  prompt_tokens: MeasuredStats,
  cached_tokens_pct: nullableNum,
});

/**
 * `--turns`, `--agent-sessions`: the level's conversations (an agent's sessions) as jobs. Complete
 * jobs (every call measured and answered) give the figures; jobs the level's end cut short or
 * with a failed call are counted apart.
 */
export const JobSummary = z.object({
  complete: z.number().int().nonnegative(),
  incomplete: z.number().int().nonnegative(),
  /** The calls of a job (`--turns`: the turns; agent sessions: the most any complete job made). */
  turns: z.number().int().positive(),
  /** First turn's send to last turn's end, seconds. */
  e2e_s: MeasuredStats,
  calls_per_job: nullableNonNeg,
  output_tokens_per_job: nullableNonNeg,
  /** Of a job's time, the share between its calls (think time, tool waits), 0 to 1. */
  wait_share: z.number().min(0).max(1).nullable(),
  cached_tokens_pct: z.number().min(0).max(100).nullable(),
  /** Each complete job's own cached share of its prompt tokens, percent, over the jobs whose every call's count is known. */
  cached_pct_per_job: MeasuredStats.optional(),
  /** Complete jobs per hour per user: complete jobs / (wall time x users) x 3600. */
  jobs_per_hour_per_user: nullableNonNeg,
  /** Complete jobs per GPU per hour: jobs per hour over the GPUs the telemetry read (absent without it). */
  jobs_per_hour_per_gpu: nullableNonNeg.optional(),
});

export const LevelResult = z
  .object({
    level: z.number().positive(),
    mode: z.enum(["closed", "open"]),
    /** Closed loop: users. Open loop: null. */
    concurrency: nullableNum,
    started_at_ms: num,
    wall_time_s: nonNeg,
    requests: z.number().int().nonnegative(),
    ok: z.number().int().nonnegative(),
    errors: z.number().int().nonnegative(),
    errors_by_code: z.record(z.string(), z.number().int().nonnegative()),
    warmup_requests: z.number().int().nonnegative(),
    prompt_tokens_total: z.number().int().nonnegative(),
    completion_tokens_total: z.number().int().nonnegative(),
    ttft_ms: MeasuredStats,
    itl_ms: MeasuredStats,
    tpot_ms: MeasuredStats,
    e2e_ms: MeasuredStats,
    e2e_stream_ms: MeasuredStats,
    decode_tok_s: MeasuredStats,
    tokens_per_chunk: MeasuredStats,
    usage_chunk_mismatches: z.number().int().nonnegative(),
    output_tok_s: nonNeg,
    total_tok_s: nonNeg,
    req_s: nonNeg,
    goodput_req_s: nonNeg,
    slo_pass_pct: z.number().min(0).max(100).nullable(),
    peak_in_flight: z.number().int().nonnegative(),
    /** Of the prompt tokens the server counted (successful requests), the % it reported cached. */
    cached_tokens_pct: nullableNum.optional(),
    /** Requests sent during the ramp-up (`--ramp-up-s`), excluded from every figure. */
    ramp_requests: z.number().int().nonnegative().optional(),
    /** `--turns`: per turn index, TTFT and the prompt the server counted and reported cached. */
    turns: z.array(TurnSummary).optional(),
    /** `--turns`: each conversation as a job (an agent's session): its time, calls, tokens, waits. */
    jobs: JobSummary.optional(),
    /** `--cancel-share`: the streams the client aborted (in no figure) and whether the server freed them. */
    cancelled: LevelCancelled.optional(),
    /** Prompt tokens as the server counted them (usage.prompt_tokens), successful requests. */
    prompt_tokens: MeasuredStats.optional(),
    /** Cached prompt tokens the server reported; with unique prompts, the prefix every prompt shares. */
    cached_tokens: MeasuredStats.optional(),
    /** Reasoning models: time to first answer token (after any reasoning), and the reasoning's length in time and tokens. */
    ttfat_ms: MeasuredStats.optional(),
    reasoning_ms: MeasuredStats.optional(),
    reasoning_tokens: MeasuredStats.optional(),
    answer_tokens: MeasuredStats.optional(),
    /** Tool calling: time to the first tool-call event, and tool calls made in all. */
    tt_first_tool_call_ms: MeasuredStats.optional(),
    tool_calls_total: z.number().int().nonnegative().optional(),
    /** The level's steady-state window: whose requests the headline figures are (level-parts.ts). */
    steady_state: SteadyState.optional(),
    /** `--base-url A,B`: the level per server and its imbalance. */
    endpoints: LevelEndpoints.optional(),
    /** GPU energy and cost over the level's window (`--gpu-sample-ms`); absent without GPU telemetry. */
    gpu: LevelGpu.optional(),
    /** Successful requests that stopped short of the output asked (ignore_eos ignored): not the workload asked for. */
    short_output: z.number().int().nonnegative().optional(),
    /** Successful measured requests by the finish reason the server gave ("none": it gave none). */
    finish_reasons: z.record(z.string(), z.number().int().nonnegative()).optional(),
    /** Whether the level's figures are what they claim, and if not why (core/results/validity.ts). */
    validity: LevelValidity.optional(),
    open_loop: OpenLoopSummary.nullable(),
    client: ClientSelfCheck,
    admission: AdmissionSummary.nullable().optional(),
    /** TTFT (and E2E) split into queue, prefill (decode) and client from the server's per-request timings. */
    ttft_split: TtftSplit.optional(),
    e2e_split: E2eSplit.optional(),
    tpot_split: TpotSplit.optional(),
    /** The server's own mean time per phase over the level's window, from its /metrics histograms. */
    server_means: ServerMeans.optional(),
    metrics_timeline: z.array(MetricsSample).optional(),
    notices: z.array(z.string()),
  })
  .superRefine((l, ctx) => {
    if (l.ok + l.errors !== l.requests)
      ctx.addIssue({
        code: "custom",
        path: ["requests"],
        message: `ok (${l.ok}) + errors (${l.errors}) must equal requests (${l.requests})`,
      });
    const byCode = Object.values(l.errors_by_code).reduce((a, b) => a + b, 0);
    if (byCode !== l.errors)
      ctx.addIssue({
        code: "custom",
        path: ["errors_by_code"],
        message: `errors_by_code sums to ${byCode}, errors is ${l.errors}`,
      });
  });
export type LevelResult = z.infer<typeof LevelResult>;

export const Target = z.object({
  base_url: z.string(),
  api: z.enum(["chat", "completions", "responses", "messages"]),
  model: z.string(),
});

export const Environment = z.object({
  os: z.string(),
  arch: z.string(),
  cpu_model: z.string().nullable(),
  cpu_count: z.number().int().nonnegative(),
  node_version: z.string(),
  hostname: z.string().nullable(),
  gpu: z
    .object({
      name: z.string().nullable(),
      count: z.number().int().nonnegative().nullable(),
      memory_mib: nullableNum,
      driver: z.string().nullable(),
      /** The CUDA version the driver reports, its power limit and its highest SM clock (absent: not read). */
      cuda_version: z.string().nullable().optional(),
      power_limit_w: nullableNum.optional(),
      sm_clock_max_mhz: nullableNum.optional(),
    })
    .nullable(),
  runner_name: z.string().nullable().optional(),
});

export const GitInfo = z.object({
  sha: z.string().nullable(),
  ref: z.string().nullable(),
  branch: z.string().nullable(),
  base_branch: z.string().nullable(),
  pr_number: z.number().int().positive().nullable(),
  workflow_run_id: z.string().nullable(),
  run_attempt: z.number().int().positive().nullable(),
});

export const Testbed = z.object({
  name: z.string().nullable(),
  gpu: z.string().nullable(),
  gpu_count: z.number().int().nonnegative().nullable(),
  engine: z.string().nullable(),
  engine_version: z.string().nullable(),
  engine_flags: z.string().nullable(),
  model: z.string().nullable(),
});

export const ServerSnapshot = z.object({
  /** Every endpoint tried: present or absent (never fatal), HTTP status, raw body (JSON, or text truncated). */
  endpoints: z.record(
    z.string(),
    z.object({ present: z.boolean(), status: z.number().int().nullable(), body: z.unknown().optional() }),
  ),
  extracted: z.record(z.string(), z.unknown()),
  limits: z.record(z.string(), z.union([z.string(), num])),
});

export const ResultDocument = z
  .object({
    schema_version: z.literal(SCHEMA_VERSION),
    kind: z.enum(["sweep", "profile"]),
    tool: z.object({ name: z.literal("tokenbench"), version: z.string() }),
    /** When the run was made (ISO 8601 with offset); the service orders history by its own receive time. */
    created_at: z.iso.datetime({ offset: true }),
    repository: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/)
      .nullable()
      .optional(),
    git: GitInfo.nullable().optional(),
    /**
     * `--server-command` (the Action's server-command): from starting it to its first HTTP answer
     * (port open), to ready (the readiness check passing) and to the first token of a one-token
     * request, seconds, cold (a server started for this run); the phases its log stated; and with
     * `--startup both` the same for a warm restart (core/server/startup.ts).
     */
    startup: Startup.nullable().optional(),
    testbed: Testbed.nullable().optional(),
    target: Target,
    environment: Environment,
    clock: z.object({
      source: z.string(),
      origin_wall_time: z.string(),
    }),
    formulas: z.record(z.string(), z.string()),
    /** The sweep's configuration; null for a profile document (its config is in `profile.config`). */
    config: SweepConfig.nullable(),
    levels: z.array(LevelResult),
    profile: Profile.nullable().optional(),
    server: ServerSnapshot.nullable().optional(),
    /** Sweep prompts sized against the server's own token count (absent: sized by word count). */
    prompt_calibration: PromptCalibration.nullable().optional(),
    /** Per-request records inline, or null when stored in `requests_file` (or stripped by the service). */
    requests: z.array(RequestRecord).nullable(),
    requests_file: z.string().nullable().optional(),
    /** Samples behind the sampled percentiles, sent in place of the records (document-parts.ts). */
    samples: SentSamples.optional(),
    /** GPU telemetry (`--gpu-sample-ms`): its source, idle window and raw reads; absent without a GPU tool. */
    gpu_telemetry: GpuTelemetry.optional(),
    /** `--mode search`: the highest rate that kept the target share of requests within every SLO. */
    saturation: Saturation.nullable().optional(),
    /** A sweep's throughput-interactivity frontier, derived from its levels (shared/frontier.ts). */
    frontier: Frontier.nullable().optional(),
    /** Hash (16 hex) of the workload: API, model, mode, levels, lengths, arrivals, SLOs, ignore_eos, body (shared/workload.ts). */
    workload_fingerprint: z
      .string()
      .regex(/^[0-9a-f]{16}$/)
      .optional(),
    /** How the load was generated, when not by one thread of one runner (document-parts.ts). */
    load_generator: LoadGenerator.nullable().optional(),
    /**
     * `--repeats N`: every repeat's own levels, in the order run; `levels` then holds each figure's
     * median over the repeats (shared/repeats.ts), and the repeats' spread is the verdict's evidence.
     */
    repeats: z
      .array(z.object({ index: z.number().int().nonnegative(), levels: z.array(LevelResult) }))
      .optional(),
    /** `--ab`: the blocks of the base's server and the head's, alternated in one job; `levels` are the head's. */
    ab: z
      .object({
        base_target: z.object({ base_url: z.string(), model: z.string() }),
        seed: z.number().int(),
        blocks: z
          .array(
            z.object({
              index: z.number().int().nonnegative(),
              arm: z.enum(["base", "head"]),
              pair: z.number().int().nonnegative(),
              levels: z.array(LevelResult),
            }),
          )
          .max(200),
        pairs: z
          .array(z.object({ base: z.number().int().nonnegative(), head: z.number().int().nonnegative() }))
          .max(100),
      })
      .optional(),
    /** Whether every level is valid; an invalid run is judged "not judged" and never enters a base history. */
    validity: RunValidity.optional(),
    /** The rules the run is judged with (document-parts.ts). */
    verdict_rules: VerdictRules.nullable().optional(),
    /** `--consistency N`: the answers to N fixed prompts at temperature 0 (document-parts.ts). */
    consistency: ConsistencyRecord.optional(),
    complete: z.boolean(),
  })
  .superRefine((d, ctx) => {
    const seen = new Set<number>();
    d.levels.forEach((l, i) => {
      if (seen.has(l.level))
        ctx.addIssue({
          code: "custom",
          path: ["levels", i, "level"],
          message: `level ${l.level} appears twice`,
        });
      seen.add(l.level);
    });
  });
export type ResultDocument = z.infer<typeof ResultDocument>;
export type ServerSnapshot = z.infer<typeof ServerSnapshot>;

export class SchemaError extends TokenbenchError {
  constructor(readonly issues: { path: string; message: string }[]) {
    super(
      "schema_invalid",
      `document does not match schema v1: ${issues.map((i) => `${i.path || "(root)"}: ${i.message}`).join("; ")}`,
    );
  }
}

/** The one parser at every boundary. Throws SchemaError with paths on failure. */
export function parseResultDocument(input: unknown): ResultDocument {
  const r = ResultDocument.safeParse(input);
  if (!r.success) {
    throw new SchemaError(
      r.error.issues.slice(0, 20).map((i) => ({ path: i.path.join("."), message: i.message })),
    );
  }
  return r.data;
}
