/** Schema v1: what a sweep was asked to do (its recorded configuration) and how its prompts were sized. */
import { z } from "zod";
import { nullableNum, num } from "./common.ts";

export const SloConfig = z.object({
  ttft_ms: nullableNum,
  tpot_ms: nullableNum,
  e2e_ms: nullableNum,
  /** Time to first answer token (after any reasoning). */
  ttfat_ms: nullableNum.optional(),
});
export type SloConfig = z.infer<typeof SloConfig>;

export const SweepConfig = z.object({
  mode: z.enum(["closed", "open"]),
  levels: z.array(num).min(1),
  requests_per_level: z.number().int().positive().nullable(),
  /**
   * True when `requests_per_level` is the default (no count was given): a closed level then adds
   * 2 per user (the requests its steady window leaves out) and measures at least 4 per user; a
   * count given is only raised to 2 per user. Absent: a count given.
   */
  requests_default: z.boolean().optional(),
  duration_s: z.number().positive().nullable(),
  warmup_requests: z.number().int().nonnegative(),
  prompt_tokens: z.number().int().positive(),
  max_tokens: z.number().int().positive(),
  prompts: z.enum(["fixed", "sample"]),
  ignore_eos: z.boolean(),
  seed: z.number().int(),
  arrival: z.enum(["poisson", "constant", "gamma"]),
  burstiness: z.number().positive(),
  max_in_flight: z.number().int().positive().nullable(),
  timeout_s: z.number().positive(),
  slo: SloConfig,
  extra_body: z.record(z.string(), z.unknown()),
  metrics_interval_ms: z.number().int().positive().nullable(),
  /** Header names only; values (API keys) are never written. */
  header_names: z.array(z.string()),
  /** `--shared-prefix-tokens N --prefix-groups G`: request i's prompt starts with group (i mod G)'s N tokens. */
  shared_prefix: z
    .object({ tokens: z.number().int().positive(), groups: z.number().int().positive() })
    .nullable()
    .optional(),
  /** `--mode search`: the pass rate to find the highest rate for, and the probes allowed. */
  search: z
    .object({
      target_pass_pct: z.number().min(0).max(100),
      max_probes: z.number().int().min(2).max(100),
      /** `--agent-tier`: an agent-capacity search (closed loop of `--agent-sessions`) for this tier. */
      tier: z
        .object({
          name: z.string(),
          ttft_p95_ms: z.number().positive(),
          tok_s_per_user: z.number().positive(),
        })
        .optional(),
    })
    .nullable()
    .optional(),
  /** `--ramp-up-s`: users (or the rate) rose to the level over this long before measurement. */
  ramp_up_s: z.number().positive().nullable().optional(),
  /** `--dataset`: the prompts' file, its line count and SHA-256 (absent: synthetic prompts). */
  dataset: z
    .object({
      name: z.string(),
      lines: z.number().int().nonnegative(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      /**
       * The share of the dataset's prompt text (by characters) that system prompts several lines
       * open with make up: the caching the dataset itself implies (a notice compares the cached
       * share with it).
       */
      shared_share: z.number().min(0).max(1).optional(),
    })
    .nullable()
    .optional(),
  /** `--turns T --think-time-ms MS`: each user holds conversations of T turns, re-sending the history. */
  sessions: z
    .object({ turns: z.number().int().min(2), think_time_ms: z.number().nonnegative() })
    .nullable()
    .optional(),
  /** `--agent-sessions`: agents' sessions replayed (closed loop, a user per session), the file and what it holds. */
  agent_sessions: z
    .object({
      name: z.string(),
      lines: z.number().int().nonnegative(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      format: z.enum(["tokenbench", "weka"]),
      sessions: z.number().int().positive(),
      /** Model calls in all the file's sessions, subagents' included. */
      calls: z.number().int().positive(),
      /** `--tool-wait`: the tools' waits as the file gives them (file), or the distribution drawn from. */
      tool_wait: z.string().optional(),
    })
    .nullable()
    .optional(),
  /** `--trace`: requests at a trace's times (Mooncake JSONL), its file and the time scale. */
  trace: z
    .object({
      name: z.string(),
      lines: z.number().int().nonnegative(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      speed: z.number().positive(),
    })
    .nullable()
    .optional(),
  /** `--tools FILE --tool-choice`: the tool definitions' file, its SHA-256, count and the choice. */
  tools: z
    .object({
      name: z.string(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      count: z.number().int().positive(),
      choice: z.string(),
      /** The definitions as sent (OpenAI chat shape). */
      definitions: z.array(z.record(z.string(), z.unknown())).min(1),
    })
    .nullable()
    .optional(),
  /** `--min-steady-s`: the shortest steady-state window a level's headline may come from (null: 5 s, or half a level under 10 s, 1 s at least). */
  min_steady_s: z.number().positive().nullable().optional(),
  /** `--client-late-floor-ms`: the client lateness a level tolerates before it is client-bound (absent: 20). */
  client_late_floor_ms: z.number().positive().optional(),
  /** `--dataset-reuse`: a dataset's entries drawn again get a unique tag ahead (tagged) or go as they are (exact). */
  dataset_reuse: z.enum(["tagged", "exact"]).optional(),
  /** `--reasoning-tags think`: reasoning was read from `<think>` tags inside the content. */
  reasoning_tags: z.enum(["think"]).nullable().optional(),
  /** `--api responses --responses-chain`: later turns named the previous response instead of re-sending it. */
  responses_chain: z.boolean().optional(),
  /** `--cancel-share P --cancel-after-tokens N`: that share of streams aborted by the client after N tokens. */
  cancel: z.object({ share: z.number().gt(0).max(1), after_tokens: z.number().int().positive() }).optional(),
  /** `--cache-reset level|sweep`: the server's prefix cache emptied before each level or once, and how (absent: off). */
  cache_reset: z
    .object({
      mode: z.enum(["level", "sweep"]),
      method: z.enum(["llamacpp_erase_slots", "sglang_flush_cache", "vllm_reset_prefix_cache"]).nullable(),
    })
    .optional(),
  /** `--gpu-sample-ms`, `--gpus`, `--gpu-hour-cost`, `--gpu-metrics-url`: GPU telemetry as asked (absent: off). */
  gpu_telemetry: z
    .object({
      sample_ms: z.number().int().positive(),
      gpus: z.array(z.number().int().nonnegative()).nullable(),
      hour_cost_usd: z.number().positive().nullable(),
      metrics_url: z.string().nullable(),
    })
    .optional(),
  /** `--target-tok-s-per-user`: speeds per user the frontier is read at (its throughput, cost and energy there). */
  target_tok_s_per_user: z.array(z.number().positive()).optional(),
  /** `--base-url A,B`: the servers the load was spread over, and how (absent: one server). */
  endpoints: z
    .object({
      base_urls: z.array(z.string()).min(2),
      strategy: z.enum(["round-robin", "least-in-flight"]),
    })
    .optional(),
  /** `--repeats N`: the sweep ran N times back to back (the document's `repeats`); absent: once. */
  repeats: z.number().int().min(2).max(50).optional(),
});
export type SweepConfig = z.infer<typeof SweepConfig>;

/** How synthetic prompts were sized so that the server counts the requested number of tokens. */
export const PromptCalibration = z.object({
  method: z.enum(["count_tokens", "tokenize", "usage_probe"]),
  /** Tokens the server adds around the user content (chat template, BOS), measured with one usage probe. */
  template_overhead_tokens: z.number().int(),
  target_tokens: z.number().int().positive(),
  /** Words of synthetic text (after the per-request unique tag) that give target_tokens. */
  words: z.number().int().positive(),
  reached_tokens: z.number().int(),
  within_tolerance: z.boolean(),
  tolerance_rule: z.string(),
  /** Tokens per word of the synthetic text, for prompts of other lengths (`--prompts sample`). */
  tokens_per_word: num,
});
export type PromptCalibration = z.infer<typeof PromptCalibration>;
