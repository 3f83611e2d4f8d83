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

/** What is wrong with a document's sent samples (a measure that is not sampled, a level it does not have), or null. */
export function samplesProblem(doc: ResultDocument): string | null {
  const levels = new Set(doc.levels.map((l) => l.level));
  for (const [i, x] of (doc.samples ?? []).entries()) {
    if (!SAMPLED[x.measure])
      return `samples[${i}].measure "${x.measure.slice(0, 64)}" is not a sampled measure (${Object.keys(SAMPLED).join(", ")})`;
    if (!levels.has(x.level)) return `samples[${i}].level ${x.level} is not a level of the document`;
    if (x.sizes && x.sizes.reduce((a, b) => a + b, 0) !== x.values.length)
      return `samples[${i}].sizes sum to ${x.sizes.reduce((a, b) => a + b, 0)}, not to the ${x.values.length} values`;
  }
  return null;
}
