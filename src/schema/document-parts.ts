/** Parts of a result document in schema v1: a search's answer, how the load was generated, sent samples. */
import { z } from "zod";
import { nullableNum, num } from "./common.ts";

/** `--mode search`: the highest rate that kept the target share of requests within every SLO. */
export const Saturation = z.object({
  max_rate_rps: nullableNum,
  bracket_rps: z.tuple([nullableNum, nullableNum]),
  pass_pct_at_max: nullableNum,
  goodput_at_max_rps: nullableNum,
  target_pass_pct: num,
  probes: z.number().int().nonnegative(),
  /** The probes the search was allowed (--search-max-probes). */
  max_probes: z.number().int().nonnegative().optional(),
  method: z.string(),
  /**
   * `--agent-tier`: agent capacity, the most concurrent sessions whose calls met the tier (the
   * rate fields above are null: the probes were closed-loop levels of sessions).
   */
  agents: z
    .object({
      tier: z.object({ name: z.string(), ttft_p95_ms: num, tok_s_per_user: num }),
      max_sessions: z.number().int().nonnegative(),
      bracket_sessions: z.tuple([nullableNum, nullableNum]),
      ttft_p95_ms_at_max: nullableNum,
      tok_s_per_user_at_max: nullableNum,
      /** Sessions per GPU (the GPU count from the telemetry or `--gpus`), per kW of the level's mean GPU power. */
      per_gpu: nullableNum,
      per_kw: nullableNum,
    })
    .optional(),
});

/**
 * How the load was generated, when not by one thread of one runner: worker threads per
 * runner, and for a run sharded across runners its shard (`i/n`) and common start (epoch ms).
 * A merged document names the shard files it was merged from.
 */
export const LoadGenerator = z.object({
  workers: z.number().int().positive(),
  shard: z
    .string()
    .regex(/^[1-9][0-9]{0,3}\/[1-9][0-9]{0,3}$/, "must be i/n with 1 <= i <= n (e.g. 2/4)")
    .refine((s) => {
      const [i, n] = s.split("/").map(Number) as [number, number];
      return i <= n;
    }, "must be i/n with 1 <= i <= n (e.g. 2/4)")
    .nullable(),
  start_at_epoch_ms: nullableNum,
  merged_from: z.array(z.string()).optional(),
});

/**
 * The per-request samples behind the sampled percentiles (shared/samples.ts: at most 1,000
 * per level and measure), sent in place of the records when an upload leaves them out, so
 * the service's bootstrap sees what the file's would.
 */
export const SentSamples = z
  .array(
    z.object({
      level: num,
      measure: z.string().max(64),
      values: z.array(z.number().finite()).max(1000),
      /** Values in groups, one per request in order (ITL: a request's gaps), their sizes; absent: one value each. */
      sizes: z.array(z.number().int().positive()).max(1000).optional(),
    }),
  )
  .max(5000);

/**
 * The rules a run is judged with (the Action's `thresholds`, `gate`, `fail-on`): stored with it,
 * so the service's badge, trend and pages judge it as its comment did.
 */
export const VerdictRules = z.object({
  thresholds: z.string().max(2000).nullable(),
  gate: z.string().max(2000).nullable(),
  fwer_pct: z.number().positive().max(49).nullable().optional(),
  fail_on: z.string().max(32).nullable(),
});

/** One GPU telemetry read (src/core/server/gpu-telemetry.ts), on the sweep's timeline. */
export const GpuSampleRecord = z.object({
  t_ms: num,
  index: z.number().int().nonnegative(),
  uuid: z.string().nullable(),
  name: z.string().nullable(),
  power_w: nullableNum,
  power_limit_w: nullableNum,
  energy_j: nullableNum,
  util_pct: nullableNum,
  mem_util_pct: nullableNum,
  mem_used_mib: nullableNum,
  mem_total_mib: nullableNum,
  sm_clock_mhz: nullableNum,
  temp_c: nullableNum,
});

export type GpuSampleRecord = z.infer<typeof GpuSampleRecord>;

/** The GPU telemetry of a sweep: where it came from, the idle window, and every raw read (the upload leaves these out). */
export const GpuTelemetry = z.object({
  source: z.string(),
  sample_ms: z.number().int().positive(),
  gpus: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      uuid: z.string().nullable(),
      name: z.string().nullable(),
    }),
  ),
  idle_window_ms: z.tuple([num, num]),
  died: z.object({ t_ms: num, reason: z.string() }).nullable(),
  samples: z.array(GpuSampleRecord).nullable(),
});

/**
 * The output-consistency check (`--consistency N`, core/server/consistency.ts): N fixed prompts at
 * temperature 0 with a fixed seed, each answer's SHA-256 and its first characters.
 */
export const ConsistencyRecord = z.object({
  prompts: z.number().int().min(1).max(100),
  max_tokens: z.number().int().positive(),
  temperature: z.number(),
  seed: z.number().int(),
  outputs: z
    .array(
      z.object({
        prompt: z.number().int().nonnegative(),
        sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .nullable(),
        text: z.string().max(400).nullable(),
        /** Why there is no answer (the request failed, or the response had no text). */
        error: z.string().max(500).nullable(),
      }),
    )
    .max(100),
});
export type ConsistencyRecord = z.infer<typeof ConsistencyRecord>;

/** A phase of the server's start its log stated: the first line that matched, and when it was read. */
const StartupPhase = z.object({
  engine: z.string(),
  phase: z.string(),
  at_s: num,
  line: z.string().max(200),
});

/** One start of the server: from the command's start to its first answer, ready and a first token, s. */
const StartFigures = z.object({
  answered_s: nullableNum,
  ready_s: num.nonnegative(),
  first_token_s: nullableNum.optional(),
  phases: z.array(StartupPhase).max(32).optional(),
});

/** `--server-command`: its cold start, and with `--startup both` a warm restart (core/server/startup.ts). */
export const Startup = StartFigures.extend({ warm: StartFigures.optional() });

const frontierNum = z.number().nonnegative().nullable();

/** The throughput-interactivity frontier of a sweep (shared/frontier.ts): derived from its levels. */
export const Frontier = z.object({
  gpus: z.number().int().positive().nullable(),
  points: z.array(
    z.object({
      level: z.number().positive(),
      tok_s_per_user: z.number().positive(),
      output_tok_s: z.number().nonnegative(),
      output_tok_s_per_gpu: frontierNum,
      ttft_p90_ms: frontierNum,
      power_w: frontierNum,
      pareto: z.boolean(),
    }),
  ),
  /** `--target-tok-s-per-user`: the frontier at each speed per user (interpolated; not reached outside it). */
  targets: z.array(
    z.object({
      tok_s_per_user: z.number().positive(),
      reached: z.boolean(),
      between: z.array(z.number().positive()).max(2),
      output_tok_s: frontierNum,
      output_tok_s_per_gpu: frontierNum,
      usd_per_m_output_tok: frontierNum,
      j_per_output_tok: frontierNum,
      output_tok_per_kwh: frontierNum,
    }),
  ),
});
