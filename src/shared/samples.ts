/**
 * Per-request samples behind a level's percentiles, for the bootstrap: the same requests the
 * level's figure came from (successful, measured, and for a steady level only those wholly inside
 * its window) and the same formulas (CONCEPTS.md §2). Pure: the results service runs it too.
 */
import type { LevelResult, RequestRecord, ResultDocument } from "../schema/v1.ts";
import { type Derived, deriveRequest, itlGapsOf } from "./formulas.ts";

/**
 * A sampled measure: the quantile its figure is, and each request's contribution by the level's
 * own formula (shared/formulas.ts). ITL contributes every gap of a request: a request's gaps
 * move together (its own decode speed), so they stay together as a group.
 */
interface Sampled {
  q: number;
  of: (r: RequestRecord, out: number[]) => void;
}

const one = (f: (d: Derived) => number | null) => (r: RequestRecord, out: number[]) => {
  const v = f(deriveRequest(r));
  if (v !== null) out.push(v);
};
const ttft = one((d) => d.ttftMs);
const e2e = one((d) => d.e2eMs);
const tpot = one((d) => d.tpotMs);
const decode = one((d) => d.decodeTokS);

/** The measures the bootstrap can judge, by catalogue name. */
export const SAMPLED: Readonly<Record<string, Sampled>> = {
  ttft_p50_ms: { q: 0.5, of: ttft },
  ttft_p95_ms: { q: 0.95, of: ttft },
  ttft_p99_ms: { q: 0.99, of: ttft },
  tpot_p50_ms: { q: 0.5, of: tpot },
  e2e_p50_ms: { q: 0.5, of: e2e },
  e2e_p95_ms: { q: 0.95, of: e2e },
  decode_tps: { q: 0.5, of: decode },
  itl_p50_ms: { q: 0.5, of: itlGapsOf },
  itl_p95_ms: { q: 0.95, of: itlGapsOf },
};

/** Samples of one level and measure: values in groups (one group per request, in order), and the quantile. */
export interface Grouped {
  q: number;
  values: number[];
  /** How many of `values` each request gave, in order (absent: one each). */
  sizes: number[] | null;
}

/** The requests a level's latency figures came from. */
function levelRequests(doc: ResultDocument, l: LevelResult): RequestRecord[] {
  const s = l.steady_state;
  const inWindow =
    s?.steady === true && s.window_start_ms !== null && s.window_end_ms !== null
      ? (r: RequestRecord) => r.send_ms >= s.window_start_ms! && (r.end_ms ?? r.send_ms) <= s.window_end_ms!
      : () => true;
  return (doc.requests ?? []).filter(
    (r) => r.level === l.level && !r.warmup && r.error === null && inWindow(r),
  );
}

/**
 * At most this many samples per level and measure: what the service stores beside a run (its
 * documents keep no records), so the bootstrap sees the same numbers from a file and from the
 * service. Requests are kept at even strides in the order measured; a request that gives several
 * (ITL: one per gap) keeps an even share of them, so each kept request stays a whole group.
 */
export const MAX_SAMPLES = 1000;

const round6 = (x: number) => Number(x.toPrecision(6)); // 1 µs in 100 ms

/** Every `n / MAX_SAMPLES`-th value to 6 significant digits (1 µs in 100 ms): what the service stores. */
export function thinned(values: readonly number[]): number[] {
  const n = values.length;
  const keep = Math.min(n, MAX_SAMPLES);
  const out = new Array<number>(keep);
  for (let i = 0; i < keep; i++) out[i] = round6(values[Math.floor((i * n) / keep)]!);
  return out;
}

/** Groups thinned to at most MAX_SAMPLES values: whole requests at even strides, each with an even share of its values. */
export function thinnedGroups(groups: readonly (readonly number[])[]): { values: number[]; sizes: number[] } {
  const nonEmpty = groups.filter((g) => g.length > 0);
  const keepGroups = Math.min(nonEmpty.length, MAX_SAMPLES);
  const perGroup = Math.max(1, Math.floor(MAX_SAMPLES / Math.max(1, keepGroups)));
  const values: number[] = [];
  const sizes: number[] = [];
  for (let i = 0; i < keepGroups; i++) {
    const g = nonEmpty[Math.floor((i * nonEmpty.length) / keepGroups)]!;
    const kept = thinnedTo(g, perGroup);
    values.push(...kept);
    sizes.push(kept.length);
  }
  return { values, sizes };
}

function thinnedTo(g: readonly number[], keep: number): number[] {
  const k = Math.min(g.length, keep);
  return Array.from({ length: k }, (_, i) => round6(g[Math.floor((i * g.length) / k)]!));
}

/**
 * A document's samples of `measure` at `level`, with the quantile its figure is; null where the
 * measure is not sampled, the document has no records, or it holds repeats (their spread is the
 * evidence then, not one run's requests).
 */
export function levelSamples(doc: ResultDocument, level: number, measure: string): Grouped | null {
  const s = SAMPLED[measure];
  if (!s || doc.kind !== "sweep" || (doc.repeats?.length ?? 0) > 1) return null;
  const l = doc.levels.find((x) => x.level === level);
  if (!l) return null;
  if (doc.requests === null) {
    const sent = doc.samples?.find((x) => x.level === level && x.measure === measure);
    return sent ? { q: s.q, values: sent.values, sizes: sent.sizes ?? null } : null;
  }
  const groups = levelRequests(doc, l).map((r) => {
    const out: number[] = [];
    s.of(r, out);
    return out;
  });
  if (groups.every((g) => g.length <= 1)) return { q: s.q, values: thinned(groups.flat()), sizes: null };
  const t = thinnedGroups(groups);
  return { q: s.q, values: t.values, sizes: t.sizes };
}

/** Every sampled measure of every level of a document (from its records, else as it was sent): what the service keeps beside the run. */
export function documentSamples(
  doc: ResultDocument,
): { level: number; measure: string; values: number[]; sizes?: number[] }[] {
  if (doc.kind !== "sweep") return [];
  if (!doc.requests) return doc.samples ?? [];
  const out: { level: number; measure: string; values: number[]; sizes?: number[] }[] = [];
  for (const l of doc.levels)
    for (const measure of Object.keys(SAMPLED)) {
      const s = levelSamples(doc, l.level, measure);
      if (s && s.values.length > 0)
        out.push({ level: l.level, measure, values: s.values, ...(s.sizes ? { sizes: s.sizes } : {}) });
    }
  return out;
}

/** The quantile a sampled measure's figure is (0.95 for ttft_p95_ms), or null. */
export function sampledQuantile(measure: string): number | null {
  return SAMPLED[measure]?.q ?? null;
}

/**
 * What is wrong with a document's sent samples (a measure that is not sampled, a level it does
 * not have, or samples that contradict the level's own figure), or null. The samples are the
 * requests the figure came from, thinned at even strides: the figure must sit where its quantile
 * does among them, to within the thinning's noise (a rank of q ± (0.05 + 3/√n)). Samples that put
 * a level's TTFT p50 elsewhere would let a base's samples say another thing than its figure.
 */
export function samplesProblem(doc: ResultDocument): string | null {
  const levels = new Map(doc.levels.map((l) => [l.level, l]));
  for (const [i, x] of (doc.samples ?? []).entries()) {
    const s = SAMPLED[x.measure];
    if (!s)
      return `samples[${i}].measure "${x.measure.slice(0, 64)}" is not a sampled measure (${Object.keys(SAMPLED).join(", ")})`;
    const l = levels.get(x.level);
    if (!l) return `samples[${i}].level ${x.level} is not a level of the document`;
    if (x.sizes && x.sizes.reduce((a, b) => a + b, 0) !== x.values.length)
      return `samples[${i}].sizes sum to ${x.sizes.reduce((a, b) => a + b, 0)}, not to the ${x.values.length} values`;
    const figure = FIGURE_OF[x.measure]?.(l) ?? null;
    const n = x.values.length;
    if (figure === null || n < 20) continue;
    const below = x.values.reduce((a, v) => a + (v < figure ? 1 : 0), 0);
    const atOrBelow = x.values.reduce((a, v) => a + (v <= figure ? 1 : 0), 0);
    const slack = 0.05 + 3 / Math.sqrt(n);
    if (atOrBelow / n < s.q - slack || below / n > s.q + slack)
      return `samples[${i}] (${x.measure} at level ${x.level}) contradict the level's own figure ${figure}: ${((100 * below) / n).toFixed(0)} % of them are below it, where a p${Math.round(s.q * 100)} has ${Math.round(100 * s.q)} % (they must be the requests the figure came from)`;
  }
  return null;
}

/** Each sampled measure's figure in a level. */
const FIGURE_OF: Readonly<Record<string, (l: LevelResult) => number | null>> = {
  ttft_p50_ms: (l) => l.ttft_ms.p50,
  ttft_p95_ms: (l) => l.ttft_ms.p95,
  ttft_p99_ms: (l) => l.ttft_ms.p99,
  tpot_p50_ms: (l) => l.tpot_ms.p50,
  e2e_p50_ms: (l) => l.e2e_ms.p50,
  e2e_p95_ms: (l) => l.e2e_ms.p95,
  decode_tps: (l) => l.decode_tok_s.p50,
  itl_p50_ms: (l) => l.itl_ms.p50,
  itl_p95_ms: (l) => l.itl_ms.p95,
};
