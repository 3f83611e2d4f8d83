/**
 * Schema v1: the one contract the harness writes, the Action uploads and the results service stores.
 * This file is the single source: `schema/result-v1.schema.json` is generated from it
 * (`npm run schema`), and every writer and reader validates with `parseResultDocument`.
 * Wire names are snake_case and carry their unit.
 */

import { z } from "zod";
import { nullableNum, num, RequestError } from "./common.ts";
import { PromptCalibration, SweepConfig } from "./config.ts";
import { GpuTelemetry, LoadGenerator, Saturation, SentSamples } from "./document-parts.ts";
import { TokenbenchError } from "./errors.ts";
import { AdmissionSummary, ClientSelfCheck, LevelGpu, MetricsSample, SteadyState } from "./level-parts.ts";
import { Profile } from "./profile.ts";

export { RequestError } from "./common.ts";
export * from "./config.ts";
export * from "./level-parts.ts";
export * from "./profile.ts";

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

export const Usage = z.object({
  prompt_tokens: z.number().int().nonnegative().nullable(),
  completion_tokens: z.number().int().nonnegative().nullable(),
  /** null when the server did not report prompt_tokens_details. */
  cached_tokens: z.number().int().nonnegative().nullable(),
});
export type Usage = z.infer<typeof Usage>;

/**
 * One request, as measured. All `*_ms` timestamps are milliseconds on the run's monotonic clock
 * (`clock.origin_*`), so any figure can be recomputed from them.
 */
export const RequestRecord = z.object({
  id: z.number().int().nonnegative(),
  level: z.number(),
  warmup: z.boolean(),
  /** Open loop: when the arrival process wanted this request sent. Null in closed loop. */
  intended_send_ms: nullableNum,
  /** When the request's headers were written to the socket (undici), the "actual send". */
  send_ms: num,
  /** When tokenbench handed the request to undici; send_ms - dispatch_ms is the client's own queue. */
  dispatch_ms: num.optional(),
  /** When the connection this request opened was established (absent: it reused one). */
  connected_ms: num.optional(),
  headers_ms: nullableNum,
  first_token_ms: nullableNum,
  last_token_ms: nullableNum,
  end_ms: nullableNum,
  /** Receive time of every content-bearing event, in order. */
  event_times_ms: z.array(num),
  /** Characters of content (and reasoning) text carried by each content-bearing event. */
  event_text_chars: z.array(z.number().int().nonnegative()),
  /** Every SSE data event, content-bearing or not ([DONE] excluded). */
  event_count: z.number().int().nonnegative(),
  prompt_tokens_requested: z.number().int().nonnegative().nullable(),
  max_tokens: z.number().int().nonnegative().nullable(),
  usage: Usage.nullable(),
  finish_reason: z.string().nullable(),
  http_status: z.number().int().nullable(),
  error: RequestError.nullable(),
  /** Server-side send timestamps (mock `x-tokenbench-server-ts`), when the server provides them. */
  server_event_times_ms: z.array(num).optional(),
  /** When the server received the request, on the same clock (mock `tokenbench_server_arrival_ts_ms`). */
  server_arrival_ms: num.optional(),
  /**
   * Times the request was sent again because the kept-alive connection it went out on turned out
   * to be closed before any response byte (e.g. llama.cpp closes after every stream). Latencies
   * count from the send that was answered. Absent: sent once.
   */
  retries: z.number().int().positive().optional(),
  /** Sent during `--ramp-up-s`, before measurement: excluded from every figure (also marked warmup). */
  ramp: z.literal(true).optional(),
  /** `--turns`: the conversation this request belongs to (the id of its first turn). */
  session: z.number().int().nonnegative().optional(),
  /** `--turns`: this request's turn in its conversation, from 1 (the history before it is re-sent). */
  turn: z.number().int().positive().optional(),
  /** What the server reported of its own timing, kept as sent (llama.cpp `timings`: prompt_ms, predicted_ms, cache_n, ...). */
  server_timings: z.record(z.string(), z.unknown()).optional(),
  /** The server's `usage` object as sent, when it carries more than the three counts (details). */
  usage_raw: z.record(z.string(), z.unknown()).optional(),
  /**
   * Reasoning (thinking) came: its first event, and the first answer token after it (content or a
   * tool call; null: no answer came). Absent: no reasoning, the first token was the answer's.
   */
  first_reasoning_ms: nullableNum.optional(),
  first_answer_ms: nullableNum.optional(),
  /** Content events that carried reasoning (a separate field, or inside `<think>` tags). */
  reasoning_events: z.number().int().nonnegative().optional(),
  /** Reasoning tokens, and where the count came from: the server's usage details, or the events' share of completion_tokens. */
  reasoning_tokens: z.number().int().nonnegative().optional(),
  reasoning_tokens_source: z.enum(["usage", "events"]).optional(),
  /** completion_tokens - reasoning_tokens. */
  answer_tokens: z.number().int().nonnegative().optional(),
  /** The first tool-call event (its name or arguments), and how many tool calls the response made. */
  first_tool_call_ms: num.optional(),
  tool_calls: z.number().int().nonnegative().optional(),
  /** Events that came after the end of the stream (`[DONE]`, Responses' terminal event): not counted. */
  events_after_done: z.number().int().positive().optional(),
  /** A dataset entry drawn again after every entry was sent: with a unique tag ahead of it, or exactly (`--dataset-reuse exact`). */
  prompt_reuse: z.enum(["tagged", "exact"]).optional(),
  /** `--repeats N`: which repeat of the sweep sent it (0-based; absent: the only one). */
  repeat: z.number().int().nonnegative().optional(),
  /** ignore_eos was asked and the response stopped short of max_tokens (the server ignored it). */
  short_output: z.literal(true).optional(),
});
export type RequestRecord = z.infer<typeof RequestRecord>;

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
    /** GPU energy and cost over the level's window (`--gpu-sample-ms`); absent without GPU telemetry. */
    gpu: LevelGpu.optional(),
    /** Successful requests that stopped short of the output asked (ignore_eos ignored): not the workload asked for. */
    short_output: z.number().int().nonnegative().optional(),
    open_loop: OpenLoopSummary.nullable(),
    client: ClientSelfCheck,
    admission: AdmissionSummary.nullable().optional(),
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
  api: z.enum(["chat", "completions", "responses"]),
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
