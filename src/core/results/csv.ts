/**
 * The CSV of a sweep's levels: one row per level, every figure in its own column, for a
 * spreadsheet or pandas. Columns are stable; a figure a level lacks is an empty cell.
 */
import type { LevelResult } from "../../schema/v1.ts";

const STAT_KEYS = ["n", "mean", "p50", "p90", "p95", "p99", "min", "max"] as const;
const STAT_FIELDS = ["ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "decode_tok_s"] as const;
/** Reasoning and tool-call figures: empty cells on levels without them. */
const SHAPE_FIELDS = [
  "ttfat_ms",
  "reasoning_ms",
  "reasoning_tokens",
  "answer_tokens",
  "tt_first_tool_call_ms",
] as const;

const GPU_FIELDS = [
  "energy_j",
  "mean_power_w",
  "peak_power_w",
  "idle_power_w",
  "output_tok_per_j",
  "j_per_output_tok",
  "j_per_request",
  "w_per_user",
  "usd_per_m_output_tok",
  "usd_per_m_total_tok",
  "window_s",
] as const;

type Jobs = NonNullable<LevelResult["jobs"]>;
/** Jobs (`--turns`, `--agent-sessions`): a column each, empty cells on levels without them. */
const JOB_COLUMNS: [string, (j: Jobs) => number | null | undefined][] = [
  ["jobs_complete", (j) => j.complete],
  ["jobs_incomplete", (j) => j.incomplete],
  ["job_e2e_s_p50", (j) => j.e2e_s.p50],
  ["job_e2e_s_p95", (j) => j.e2e_s.p95],
  ["jobs_per_hour_per_user", (j) => j.jobs_per_hour_per_user],
  ["jobs_per_hour_per_gpu", (j) => j.jobs_per_hour_per_gpu],
  ["calls_per_job", (j) => j.calls_per_job],
  ["output_tokens_per_job", (j) => j.output_tokens_per_job],
  ["job_wait_share", (j) => j.wait_share],
  ["job_cached_tokens_pct", (j) => j.cached_tokens_pct],
  ["job_cached_pct_p50", (j) => j.cached_pct_per_job?.p50 ?? null],
  ["job_cached_pct_min", (j) => j.cached_pct_per_job?.min ?? null],
];

/** One row per level, every figure a column (a stat's as field_stat); empty where a level has none. */
export function csvTable(levels: readonly LevelResult[]): string {
  const cols: string[] = [
    "level",
    "mode",
    "requests",
    "ok",
    "errors",
    "wall_time_s",
    "output_tok_s",
    "total_tok_s",
    "req_s",
    "goodput_req_s",
    "slo_pass_pct",
    "peak_in_flight",
    "prompt_tokens_total",
    "completion_tokens_total",
  ];
  for (const f of STAT_FIELDS) for (const k of STAT_KEYS) cols.push(`${f}_${k}`);
  cols.push(
    "target_rate_rps",
    "achieved_rate_rps",
    "schedule_lag_ms_p99",
    "client_cpu_pct",
    "bottleneck_warning",
    "timing_note",
  );
  cols.push("cached_tokens_pct", "steady", "steady_window_s");
  for (const f of SHAPE_FIELDS) for (const k of STAT_KEYS) cols.push(`${f}_${k}`);
  cols.push("tool_calls_total", "short_output");
  cols.push(...GPU_FIELDS.map((f) => `gpu_${f}`), "gpu_unknown_reason");
  cols.push(...JOB_COLUMNS.map(([name]) => name));
  const cell = (v: unknown): string => {
    if (v === null || v === undefined) return "";
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [cols.join(",")];
  for (const l of levels) {
    const row: unknown[] = [
      l.level,
      l.mode,
      l.requests,
      l.ok,
      l.errors,
      l.wall_time_s,
      l.output_tok_s,
      l.total_tok_s,
      l.req_s,
      l.goodput_req_s,
      l.slo_pass_pct,
      l.peak_in_flight,
      l.prompt_tokens_total,
      l.completion_tokens_total,
    ];
    for (const f of STAT_FIELDS) for (const k of STAT_KEYS) row.push(l[f][k]);
    row.push(
      l.open_loop?.target_rate_rps,
      l.open_loop?.achieved_rate_rps,
      l.open_loop?.schedule_lag_ms.p99,
      l.client.cpu_pct_of_one_core,
      l.client.bottleneck_warning,
      l.client.timing_note,
    );
    row.push(l.cached_tokens_pct, l.steady_state?.steady, l.steady_state?.window_s);
    for (const f of SHAPE_FIELDS) for (const k of STAT_KEYS) row.push(l[f]?.[k]);
    row.push(l.tool_calls_total, l.short_output);
    row.push(...GPU_FIELDS.map((f) => l.gpu?.[f]), l.gpu?.unknown_reason);
    row.push(...JOB_COLUMNS.map(([, get]) => (l.jobs ? get(l.jobs) : null)));
    lines.push(row.map(cell).join(","));
  }
  return `${lines.join("\n")}\n`;
}
