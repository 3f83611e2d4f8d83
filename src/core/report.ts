/** Rendering of results: the Markdown table and the CSV of per-level aggregates. */
import type { LevelResult } from "../schema/v1.ts";

const fmt = (v: number | null | undefined, digits: number): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "-" : v.toFixed(digits);

export const MARKDOWN_COLUMNS = [
  "level",
  "req",
  "err",
  "out tok/s",
  "TTFT p50 (ms)",
  "TTFT p95 (ms)",
  "ITL p50 (ms)",
  "ITL p95 (ms)",
  "TPOT p50 (ms)",
  "SLO pass",
  "goodput req/s",
] as const;

export function markdownTable(levels: readonly LevelResult[]): string {
  const head = `| ${MARKDOWN_COLUMNS.join(" | ")} |`;
  const sep = `|${MARKDOWN_COLUMNS.map(() => "---:").join("|")}|`;
  const rows = levels.map(
    (l) =>
      `| ${l.level} | ${l.requests} | ${l.errors} | ${fmt(l.output_tok_s, 0)} | ${fmt(l.ttft_ms.p50, 1)} | ${fmt(l.ttft_ms.p95, 1)} | ${fmt(l.itl_ms.p50, 2)} | ${fmt(l.itl_ms.p95, 2)} | ${fmt(l.tpot_ms.p50, 2)} | ${l.slo_pass_pct === null ? "-" : `${l.slo_pass_pct.toFixed(0)}%`} | ${fmt(l.goodput_req_s, 2)} |`,
  );
  return [head, sep, ...rows].join("\n");
}

const STAT_KEYS = ["n", "mean", "p50", "p90", "p95", "p99", "min", "max"] as const;
const STAT_FIELDS = ["ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "decode_tok_s"] as const;

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
  );
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
    );
    lines.push(row.map(cell).join(","));
  }
  return `${lines.join("\n")}\n`;
}
