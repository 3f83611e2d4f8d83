/**
 * Benchmarks and measures: how a schema-v1 document becomes comparable points. Shared by the
 * results service, the Action and `tokenbench compare`, so all three compute the same thing.
 * Pure: no Node, no Workers APIs.
 */
import type { LevelResult, ResultDocument } from "../schema/v1.ts";
import { sloGiven } from "./workload.ts";

export type Direction = "lower" | "higher";

export interface MeasureDef {
  name: string;
  unit: string;
  direction: Direction;
  /** Human name for comments, charts and badges, e.g. "TTFT p95". */
  label: string;
  description: string;
}

type LevelValue = (l: LevelResult) => number | null;
const lower = "lower" as const;
const higher = "higher" as const;

/**
 * The measure catalogue: every comparable measure, its unit, direction and human name, and
 * (for sweep levels) how it is read from a level. Points, compare rows, charts, badges and
 * the headline all come from here.
 */
const CATALOGUE: readonly [MeasureDef, LevelValue | null][] = [
  [
    {
      name: "ttft_p50_ms",
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
      unit: "USD",
      direction: lower,
      label: "$ per M total tokens",
      description: "GPU-hour cost per million prompt + output tokens at the level's throughput",
    },
    (l) => l.gpu?.usd_per_m_total_tok ?? null,
  ],
];

export const MEASURES: readonly MeasureDef[] = CATALOGUE.map(([m]) => m);

export const MEASURE_BY_NAME: ReadonlyMap<string, MeasureDef> = new Map(MEASURES.map((m) => [m.name, m]));

export interface Point {
  benchmark: string;
  measure: string;
  value: number;
  /** Sweep level, for charts against level (null for profile points). */
  level: number | null;
}

export function benchmarkName(l: Pick<LevelResult, "mode" | "level">): string {
  return l.mode === "closed" ? `closed c=${l.level}` : `open ${l.level} req/s`;
}

const put = (
  out: Point[],
  benchmark: string,
  level: number | null,
  measure: string,
  v: number | null | undefined,
) => {
  if (typeof v === "number" && Number.isFinite(v)) out.push({ benchmark, measure, value: v, level });
};

export function levelPoints(l: LevelResult): Point[] {
  const b = benchmarkName(l);
  const out: Point[] = [];
  for (const [m, read] of CATALOGUE) if (read !== null) put(out, b, l.level, m.name, read(l));
  return out;
}

export function profilePoints(doc: ResultDocument): Point[] {
  const out: Point[] = [];
  const s = doc.profile?.summary;
  if (!s) return out;
  for (const [target, v] of Object.entries(s.prefill)) {
    const b = `profile prefill ${target}`;
    put(out, b, null, "ttft_p50_ms", v.client_wall_ttft_ms.median);
    put(out, b, null, "effective_prefill_tps", v.client_wall_effective_prefill_tps.median);
  }
  put(out, "profile decode", null, "decode_tps", s.decode.client_wall_decode_tps.median);
  for (const [k, v] of Object.entries(s.prefix_cache)) {
    put(out, `profile prefix ${k}`, null, "ttft_p50_ms", v.client_wall_ttft_ms.median);
    if (k !== "fresh") put(out, `profile prefix ${k}`, null, "ttft_ratio", v.ttft_ratio_vs_fresh);
  }
  return out;
}

/** Measures that mean something only under an SLO: without one every request passes. */
const UNDER_SLO = new Set(["slo_pass_pct", "goodput_req_s"]);

/** A sweep's points at its levels; SLO pass and goodput only when the sweep was given an SLO. */
export function sweepLevelPoints(doc: ResultDocument, levels: readonly LevelResult[]): Point[] {
  const pts = levels.flatMap(levelPoints);
  return sloGiven(doc.config) ? pts : pts.filter((p) => !UNDER_SLO.has(p.measure));
}

/** Every comparable point of a document. */
export function documentPoints(doc: ResultDocument): Point[] {
  if (doc.kind === "profile") return profilePoints(doc);
  const out = sweepLevelPoints(doc, doc.levels);
  // A search's answer is a measure of its own, on a benchmark of its own (compared, badged).
  put(out, "search saturation", null, "saturation_rps", doc.saturation?.max_rate_rps ?? null);
  return out;
}

/** The measure a badge shows by default: output tok/s at the highest level, or profile decode tok/s. */
export function headline(points: readonly Point[]): Point | null {
  const out = points.filter((p) => p.measure === "output_tok_s" && p.level !== null);
  if (out.length > 0) return out.reduce((a, b) => (b.level! > a.level! ? b : a));
  return (
    points.find((p) => p.benchmark === "profile decode" && p.measure === "decode_tps") ?? points[0] ?? null
  );
}
