/**
 * Benchmarks and measures: how a schema-v1 document becomes comparable points. Shared by the
 * results service, the Action and `tokenbench compare`, so all three compute the same thing.
 * Pure: no Node, no Workers APIs.
 */
import type { LevelResult, ResultDocument } from "../schema/v1.ts";

export type Direction = "lower" | "higher";

export interface MeasureDef {
  name: string;
  unit: string;
  direction: Direction;
  description: string;
}

export const MEASURES: readonly MeasureDef[] = [
  { name: "ttft_p50_ms", unit: "ms", direction: "lower", description: "time to first token, median" },
  { name: "ttft_p95_ms", unit: "ms", direction: "lower", description: "time to first token, p95" },
  { name: "ttft_p99_ms", unit: "ms", direction: "lower", description: "time to first token, p99" },
  { name: "itl_p50_ms", unit: "ms", direction: "lower", description: "inter-token (chunk) latency, median" },
  { name: "itl_p95_ms", unit: "ms", direction: "lower", description: "inter-token (chunk) latency, p95" },
  { name: "tpot_p50_ms", unit: "ms", direction: "lower", description: "time per output token, median" },
  { name: "e2e_p50_ms", unit: "ms", direction: "lower", description: "end-to-end latency, median" },
  { name: "e2e_p95_ms", unit: "ms", direction: "lower", description: "end-to-end latency, p95" },
  { name: "output_tok_s", unit: "tok/s", direction: "higher", description: "output tokens per second" },
  {
    name: "total_tok_s",
    unit: "tok/s",
    direction: "higher",
    description: "prompt + output tokens per second",
  },
  { name: "req_s", unit: "req/s", direction: "higher", description: "successful requests per second" },
  {
    name: "goodput_req_s",
    unit: "req/s",
    direction: "higher",
    description: "requests meeting every SLO per second",
  },
  {
    name: "slo_pass_pct",
    unit: "%",
    direction: "higher",
    description: "share of requests meeting every SLO",
  },
  { name: "error_rate", unit: "ratio", direction: "lower", description: "failed requests / requests" },
  { name: "decode_tps", unit: "tok/s", direction: "higher", description: "per-request decode tok/s, median" },
  {
    name: "effective_prefill_tps",
    unit: "tok/s",
    direction: "higher",
    description: "client-wall (prompt - cached) tokens / TTFT, median",
  },
  {
    name: "ttft_ratio",
    unit: "ratio",
    direction: "lower",
    description: "prefix-cache case TTFT / fresh TTFT",
  },
];

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
  const lv = l.level;
  put(out, b, lv, "ttft_p50_ms", l.ttft_ms.p50);
  put(out, b, lv, "ttft_p95_ms", l.ttft_ms.p95);
  put(out, b, lv, "ttft_p99_ms", l.ttft_ms.p99);
  put(out, b, lv, "itl_p50_ms", l.itl_ms.p50);
  put(out, b, lv, "itl_p95_ms", l.itl_ms.p95);
  put(out, b, lv, "tpot_p50_ms", l.tpot_ms.p50);
  put(out, b, lv, "e2e_p50_ms", l.e2e_ms.p50);
  put(out, b, lv, "e2e_p95_ms", l.e2e_ms.p95);
  put(out, b, lv, "output_tok_s", l.output_tok_s);
  put(out, b, lv, "total_tok_s", l.total_tok_s);
  put(out, b, lv, "req_s", l.req_s);
  put(out, b, lv, "goodput_req_s", l.goodput_req_s);
  put(out, b, lv, "slo_pass_pct", l.slo_pass_pct);
  put(out, b, lv, "error_rate", l.requests > 0 ? l.errors / l.requests : null);
  put(out, b, lv, "decode_tps", l.decode_tok_s.p50);
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

/** Every comparable point of a document. */
export function documentPoints(doc: ResultDocument): Point[] {
  return doc.kind === "profile" ? profilePoints(doc) : doc.levels.flatMap(levelPoints);
}

/** The measure a badge shows by default: output tok/s at the highest level, or profile decode tok/s. */
export function headline(points: readonly Point[]): Point | null {
  const out = points.filter((p) => p.measure === "output_tok_s" && p.level !== null);
  if (out.length > 0) return out.reduce((a, b) => (b.level! > a.level! ? b : a));
  return (
    points.find((p) => p.benchmark === "profile decode" && p.measure === "decode_tps") ?? points[0] ?? null
  );
}
