/** Schema v1, the single-stream serving profile: its configuration, samples and typed summary. */
import { z } from "zod";
import { nullableNum, num, RequestError } from "./common.ts";

/** Single-stream serving profile. */
export const ProfileSample = z.object({
  phase: z.enum(["warmup", "prefill", "decode", "prefix_fresh", "prefix_identical", "prefix_small_suffix"]),
  target_tokens: z.number().int().nullable(),
  repetition: z.number().int().nonnegative(),
  prompt_tokens: z.number().int().nullable(),
  cached_tokens: z.number().int().nullable(),
  completion_tokens: z.number().int().nullable(),
  client_wall_ttft_ms: nullableNum,
  client_wall_total_ms: nullableNum,
  client_wall_decode_tps: nullableNum,
  client_wall_effective_prefill_tps: nullableNum,
  error: RequestError.nullable(),
});

export const ProfileConfig = z.object({
  targets: z.array(z.number().int().positive()).min(1),
  repetitions: z.number().int().positive(),
  warmup_runs: z.number().int().nonnegative(),
  decode_tokens: z.number().int().positive(),
  suffix_tokens: z.number().int().positive(),
  prefix_target: z.number().int().positive(),
  thinking: z.enum(["kwargs", "thinking", "both", "none"]),
  ready_timeout_s: z.number().positive(),
  extra_body: z.record(z.string(), z.unknown()),
  header_names: z.array(z.string()),
});
export type ProfileConfig = z.infer<typeof ProfileConfig>;

/** Median, range and (with enough samples) percentiles of one profile figure. */
export const ProfileStat = z.object({
  n: z.number().int().nonnegative(),
  median: num.nullable(),
  min: num.nullable(),
  max: num.nullable(),
  p90: num.nullable().optional(),
  p95: num.nullable().optional(),
  p99: num.nullable().optional(),
});
const PrefixCase = z.object({
  client_wall_ttft_ms: ProfileStat,
  cached_tokens: ProfileStat,
  prompt_tokens: ProfileStat,
  ttft_ratio_vs_fresh: num.nullable(),
});
export const ProfileSummary = z.object({
  /** Per calibrated prompt size (the key is the target in tokens). */
  prefill: z.record(
    z.string(),
    z.object({
      prompt_tokens: ProfileStat,
      client_wall_ttft_ms: ProfileStat,
      client_wall_effective_prefill_tps: ProfileStat,
    }),
  ),
  decode: z.object({ client_wall_decode_tps: ProfileStat, client_wall_ttft_ms: ProfileStat }),
  prefix_cache: z.object({ fresh: PrefixCase, identical: PrefixCase, small_suffix: PrefixCase }),
  errors: z.number().int().nonnegative(),
});
export type ProfileSummary = z.infer<typeof ProfileSummary>;
export type ProfileStat = z.infer<typeof ProfileStat>;

export const Profile = z.object({
  config: ProfileConfig,
  readiness: z.object({ ready: z.boolean(), waited_s: num, probes: z.array(z.string()) }),
  calibration: z.object({
    method: z.enum(["count_tokens", "tokenize", "usage_probe"]),
    tolerance_rule: z.string(),
    targets: z.array(
      z.object({
        target_tokens: z.number().int(),
        reached_tokens: z.number().int(),
        within_tolerance: z.boolean(),
        iterations: z.number().int(),
      }),
    ),
    suffix_tokens: z.number().int().nullable(),
  }),
  cached_tokens_reporting: z.enum(["reported", "omitted_when_zero", "not_reported", "unknown"]),
  samples: z.array(ProfileSample),
  summary: ProfileSummary,
});

export type ProfileSection = z.infer<typeof Profile>;
export type ProfileSample = z.infer<typeof ProfileSample>;
