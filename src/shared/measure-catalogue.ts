/**
 * The measure catalogue: every comparable measure, its family, unit, direction and human name,
 * and (for sweep levels) how it is read from a level. Points, compare rows, charts, badges and the
 * headline all come from here (through shared/measures.ts). Pure.
 */
import type { LevelValue, MeasureDef } from "./measure-types.ts";
import { RUN_MEASURES } from "./run-measures.ts";

export {
  type Direction,
  isShare,
  type LevelValue,
  MEASURE_FAMILIES,
  type MeasureDef,
  type MeasureFamily,
} from "./measure-types.ts";

const lower = "lower" as const;
const higher = "higher" as const;

/**
 * The measure catalogue: every comparable measure, its unit, direction and human name, and
 * (for sweep levels) how it is read from a level. Points, compare rows, charts, badges and
 * the headline all come from here.
 */
export const CATALOGUE: readonly [MeasureDef, LevelValue | null][] = [
  [
    {
      name: "ttft_p50_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "TTFT p50",
      description: "time to first token, median",
    },
    (l) => l.ttft_ms.p50,
  ],
  [
    {
      name: "ttft_p95_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "TTFT p95",
      description: "time to first token, p95",
    },
    (l) => l.ttft_ms.p95,
  ],
  [
    {
      name: "ttft_p99_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "TTFT p99",
      description: "time to first token, p99",
    },
    (l) => l.ttft_ms.p99,
  ],
  [
    {
      name: "itl_p50_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "ITL p50",
      description: "inter-token (chunk) latency, median",
    },
    (l) => l.itl_ms.p50,
  ],
  [
    {
      name: "itl_p95_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "ITL p95",
      description: "inter-token (chunk) latency, p95",
    },
    (l) => l.itl_ms.p95,
  ],
  [
    {
      name: "tpot_p50_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "TPOT p50",
      description: "time per output token, median",
    },
    (l) => l.tpot_ms.p50,
  ],
  [
    {
      name: "e2e_p50_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "E2E p50",
      description: "end-to-end latency, median",
    },
    (l) => l.e2e_ms.p50,
  ],
  [
    {
      name: "e2e_p95_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "E2E p95",
      description: "end-to-end latency, p95",
    },
    (l) => l.e2e_ms.p95,
  ],
  [
    {
      name: "output_tok_s",
      family: "rate",
      unit: "tok/s",
      direction: higher,
      label: "output tok/s",
      description: "output tokens per second",
    },
    (l) => l.output_tok_s,
  ],
  [
    {
      name: "total_tok_s",
      family: "rate",
      unit: "tok/s",
      direction: higher,
      label: "total tok/s",
      description: "prompt + output tokens per second",
    },
    (l) => l.total_tok_s,
  ],
  [
    {
      name: "req_s",
      family: "rate",
      unit: "req/s",
      direction: higher,
      label: "req/s",
      description: "successful requests per second",
    },
    (l) => l.req_s,
  ],
  [
    {
      name: "goodput_req_s",
      family: "slo",
      unit: "req/s",
      direction: higher,
      label: "goodput req/s",
      description: "requests meeting every SLO per second",
    },
    (l) => l.goodput_req_s,
  ],
  [
    {
      name: "slo_pass_pct",
      family: "slo",
      unit: "%",
      direction: higher,
      label: "SLO pass %",
      description: "share of requests meeting every SLO",
    },
    (l) => l.slo_pass_pct,
  ],
  [
    {
      name: "error_rate",
      family: "errors",
      unit: "ratio",
      direction: lower,
      label: "error rate",
      description: "failed requests / requests",
    },
    (l) => (l.requests > 0 ? l.errors / l.requests : null),
  ],
  [
    {
      name: "decode_tps",
      family: "latency",
      unit: "tok/s",
      direction: higher,
      label: "decode tok/s",
      description: "per-request decode tok/s, median",
    },
    (l) => l.decode_tok_s.p50,
  ],
  [
    {
      name: "effective_prefill_tps",
      family: "latency",
      unit: "tok/s",
      direction: higher,
      label: "prefill tok/s",
      description: "client-wall (prompt - cached) tokens / TTFT, median",
    },
    null,
  ],
  [
    {
      name: "ttft_ratio",
      family: "latency",
      unit: "ratio",
      direction: lower,
      label: "TTFT ratio",
      description: "prefix-cache case TTFT / fresh TTFT",
    },
    null,
  ],
  [
    {
      name: "saturation_rps",
      family: "search",
      unit: "req/s",
      direction: higher,
      label: "max rate under SLO",
      description:
        "--mode search: the highest open-loop rate that kept the target share of requests within every SLO",
    },
    null,
  ],
  // Reasoning and tool-calling streams: only where a level has them.
  [
    {
      name: "ttfat_p50_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "TTFAT p50",
      description: "time to first answer token (after any reasoning), median",
    },
    (l) => l.ttfat_ms?.p50 ?? null,
  ],
  [
    {
      name: "ttfat_p95_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "TTFAT p95",
      description: "time to first answer token (after any reasoning), p95",
    },
    (l) => l.ttfat_ms?.p95 ?? null,
  ],
  [
    {
      name: "ttfat_p99_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "TTFAT p99",
      description: "time to first answer token (after any reasoning), p99",
    },
    (l) => l.ttfat_ms?.p99 ?? null,
  ],
  [
    {
      name: "reasoning_p50_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "reasoning time p50",
      description: "first reasoning token to first answer token, median",
    },
    (l) => l.reasoning_ms?.p50 ?? null,
  ],
  [
    {
      name: "reasoning_tokens_p50",
      family: "tokens",
      unit: "tokens",
      direction: lower,
      label: "reasoning tokens p50",
      description: "reasoning tokens per answer, median",
    },
    (l) => l.reasoning_tokens?.p50 ?? null,
  ],
  [
    {
      name: "tt_first_tool_call_p50_ms",
      family: "latency",
      unit: "ms",
      direction: lower,
      label: "first tool call p50",
      description: "time to the first tool-call token, median",
    },
    (l) => l.tt_first_tool_call_ms?.p50 ?? null,
  ],
  [
    {
      name: "output_tok_per_j",
      family: "gpu",
      unit: "tok/J",
      direction: higher,
      label: "tok/J",
      description: "output tokens per joule of GPU energy over the level's window",
    },
    (l) => l.gpu?.output_tok_per_j ?? null,
  ],
  [
    {
      name: "j_per_output_tok",
      family: "gpu",
      unit: "J",
      direction: lower,
      label: "J per output token",
      description: "GPU energy per output token over the level's window",
    },
    (l) => l.gpu?.j_per_output_tok ?? null,
  ],
  [
    {
      name: "gpu_power_mean_w",
      family: "gpu",
      unit: "W",
      direction: lower,
      label: "GPU power",
      description: "mean GPU power over the level's window, summed over the server's GPUs",
    },
    (l) => l.gpu?.mean_power_w ?? null,
  ],
  [
    {
      name: "usd_per_m_output_tok",
      family: "gpu",
      unit: "USD",
      direction: lower,
      label: "$ per M output tokens",
      description: "GPU-hour cost per million output tokens at the level's throughput (--gpu-hour-cost)",
    },
    (l) => l.gpu?.usd_per_m_output_tok ?? null,
  ],
  [
    {
      name: "usd_per_m_total_tok",
      family: "gpu",
      unit: "USD",
      direction: lower,
      label: "$ per M total tokens",
      description: "GPU-hour cost per million prompt + output tokens at the level's throughput",
    },
    (l) => l.gpu?.usd_per_m_total_tok ?? null,
  ],
  // Jobs (`--turns`: a conversation, as an agent's session): only where a level has them.
  [
    {
      name: "job_e2e_p50_s",
      family: "latency",
      unit: "s",
      direction: lower,
      label: "job time p50",
      description:
        "one job (a conversation of --turns calls) from its first send to its last answer, waits included, median",
    },
    (l) => l.jobs?.e2e_s.p50 ?? null,
  ],
  [
    {
      name: "job_e2e_p95_s",
      family: "latency",
      unit: "s",
      direction: lower,
      label: "job time p95",
      description:
        "one job (a conversation of --turns calls) from its first send to its last answer, waits included, p95",
    },
    (l) => l.jobs?.e2e_s.p95 ?? null,
  ],
  [
    {
      name: "jobs_per_hour_per_user",
      family: "rate",
      unit: "jobs/h",
      direction: higher,
      label: "jobs per hour per user",
      description: "complete jobs per user per hour at the level: complete jobs / (wall time x users) x 3600",
    },
    (l) => l.jobs?.jobs_per_hour_per_user ?? null,
  ],
  // run-wide measures that came later (the server's start, agent capacity), in catalogue order
  ...RUN_MEASURES,
];
