/**
 * Per-request samples behind a level's percentiles, for the bootstrap: the same requests the
 * level's figure came from (successful, measured, and for a steady level only those wholly inside
 * its window) and the same formulas (CONCEPTS.md §2). Pure: the results service runs it too.
 */
import type { LevelResult, RequestRecord, ResultDocument } from "../schema/v1.ts";

/** A sampled measure: the quantile its figure is, and each request's contribution. */
interface Sampled {
  q: number;
  of: (r: RequestRecord, out: number[]) => void;
}

const ttft = (r: RequestRecord, out: number[]) => {
  if (r.first_token_ms !== null) out.push(r.first_token_ms - r.send_ms);
};
const e2e = (r: RequestRecord, out: number[]) => {
  if (r.last_token_ms !== null) out.push(r.last_token_ms - r.send_ms);
};
/** TPOT and decode rate need two tokens and a span (the level's formulas). */
const decodeSpan = (r: RequestRecord): { spanMs: number; tokens: number } | null => {
  const ct = r.usage?.completion_tokens ?? null;
  if (r.first_token_ms === null || r.last_token_ms === null || ct === null || ct < 2) return null;
  return { spanMs: r.last_token_ms - r.first_token_ms, tokens: ct - 1 };
};
const tpot = (r: RequestRecord, out: number[]) => {
  const d = decodeSpan(r);
  if (d) out.push(d.spanMs / d.tokens);
};
const decode = (r: RequestRecord, out: number[]) => {
  const d = decodeSpan(r);
  if (d && d.spanMs > 0) out.push(d.tokens / (d.spanMs / 1000));
};
const gaps = (r: RequestRecord, out: number[]) => {
  const et = r.event_times_ms;
  for (let i = 1; i < et.length; i++) out.push(et[i]! - et[i - 1]!);
};

/** The measures the bootstrap can judge, by catalogue name. */
export const SAMPLED: Readonly<Record<string, Sampled>> = {
  ttft_p50_ms: { q: 0.5, of: ttft },
  ttft_p95_ms: { q: 0.95, of: ttft },
  ttft_p99_ms: { q: 0.99, of: ttft },
  tpot_p50_ms: { q: 0.5, of: tpot },
  e2e_p50_ms: { q: 0.5, of: e2e },
  e2e_p95_ms: { q: 0.95, of: e2e },
  decode_tps: { q: 0.5, of: decode },
  itl_p50_ms: { q: 0.5, of: gaps },
  itl_p95_ms: { q: 0.95, of: gaps },
};

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
 * At most this many samples per level and measure, taken at even strides in the order measured:
 * what the service stores beside a run (its documents keep no records), so the bootstrap sees
 * the same numbers from a file and from the service. ITL pools every gap of every request (100
 * per request at 100 tokens), which is where the cap bites; fewer samples only widen the interval.
 */
export const MAX_SAMPLES = 1000;

/** Every `n / MAX_SAMPLES`-th value to 6 significant digits (1 µs in 100 ms): what the service stores. */
export function thinned(values: readonly number[]): number[] {
  const n = values.length;
  const keep = Math.min(n, MAX_SAMPLES);
  const out = new Array<number>(keep);
  for (let i = 0; i < keep; i++) out[i] = Number(values[Math.floor((i * n) / keep)]!.toPrecision(6));
  return out;
}

/**
 * A document's samples of `measure` at `level`, with the quantile its figure is; null where the
 * measure is not sampled, the document has no records, or it holds repeats (their spread is the
 * evidence then, not one run's requests).
 */
export function levelSamples(
  doc: ResultDocument,
  level: number,
  measure: string,
): { q: number; values: number[] } | null {
  const s = SAMPLED[measure];
  if (!s || doc.kind !== "sweep" || (doc.repeats?.length ?? 0) > 1) return null;
  const l = doc.levels.find((x) => x.level === level);
  if (!l) return null;
  if (doc.requests === null) {
    const sent = doc.samples?.find((x) => x.level === level && x.measure === measure);
    return sent ? { q: s.q, values: sent.values } : null;
  }
  const values: number[] = [];
  for (const r of levelRequests(doc, l)) s.of(r, values);
  return { q: s.q, values: thinned(values) };
}

/** Every sampled measure of every level of a document (from its records, else as it was sent): what the service keeps beside the run. */
export function documentSamples(doc: ResultDocument): { level: number; measure: string; values: number[] }[] {
  if (doc.kind !== "sweep") return [];
  if (!doc.requests) return doc.samples ?? [];
  const out: { level: number; measure: string; values: number[] }[] = [];
  for (const l of doc.levels)
    for (const measure of Object.keys(SAMPLED)) {
      const s = levelSamples(doc, l.level, measure);
      if (s && s.values.length > 0) out.push({ level: l.level, measure, values: s.values });
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
  }
  return null;
}
