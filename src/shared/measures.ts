/**
 * Benchmarks and measures: how a schema-v1 document becomes comparable points. Shared by the
 * results service, the Action and `tokenbench compare`, so all three compute the same thing.
 * Pure: no Node, no Workers APIs.
 */
import type { LevelResult, ResultDocument } from "../schema/v1.ts";
import { CATALOGUE, type MeasureDef } from "./measure-catalogue.ts";
import { sloGiven } from "./workload.ts";

export {
  type Direction,
  isShare,
  MEASURE_FAMILIES,
  type MeasureDef,
  type MeasureFamily,
} from "./measure-catalogue.ts";

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

/** The benchmark of the frontier read at a target speed per user ("at 30 tok/s per user"). */
export const targetBenchmark = (tokSPerUser: number) =>
  `at ${Number(tokSPerUser.toPrecision(6))} tok/s per user`;
export const isTargetBenchmark = (benchmark: string) => /^at [\d.]+ tok\/s per user$/.test(benchmark);

/** Every comparable point of a document. */
export function documentPoints(doc: ResultDocument): Point[] {
  if (doc.kind === "profile") return profilePoints(doc);
  const out = sweepLevelPoints(doc, doc.levels);
  // A search's answer is a measure of its own, on a benchmark of its own (compared, badged).
  put(out, "search saturation", null, "saturation_rps", doc.saturation?.max_rate_rps ?? null);
  // Agent capacity, on a benchmark per tier (a tier's thresholds are in the workload's identity).
  const agents = doc.saturation?.agents;
  if (agents) put(out, `agent capacity ${agents.tier.name}`, null, "agent_sessions", agents.max_sessions);
  // The frontier at each --target-tok-s-per-user it reaches: throughput, cost and energy there.
  for (const t of doc.frontier?.targets ?? []) {
    if (!t.reached) continue;
    const b = targetBenchmark(t.tok_s_per_user);
    put(out, b, null, "output_tok_s", t.output_tok_s);
    put(out, b, null, "usd_per_m_output_tok", t.usd_per_m_output_tok);
    put(out, b, null, "j_per_output_tok", t.j_per_output_tok);
    put(
      out,
      b,
      null,
      "output_tok_per_j",
      t.j_per_output_tok !== null && t.j_per_output_tok > 0 ? 1 / t.j_per_output_tok : null,
    );
  }
  // The server's start (the Action's server-command), a measure of the run, compared and trended.
  put(out, "server startup", null, "startup_s", doc.startup?.ready_s ?? null);
  put(out, "server startup", null, "startup_first_token_s", doc.startup?.first_token_s ?? null);
  put(out, "server startup", null, "startup_warm_s", doc.startup?.warm?.ready_s ?? null);
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
