/**
 * A sweep run `--repeats N` times: its headline levels are each figure's median over the repeats,
 * and each repeat's points are the evidence the verdict engine weighs. Pure.
 */
import type { LevelResult, ResultDocument } from "../schema/v1.ts";
import { documentPoints, type Point, sweepLevelPoints } from "./measures.ts";

/** Median of numbers: the middle one, or the mean of the middle two (rounded when both are whole: a count stays a count). */
export function medianOf(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = (s.length - 1) / 2;
  if (Number.isInteger(mid)) return s[mid]!;
  const lo = s[Math.floor(mid)]!;
  const hi = s[Math.ceil(mid)]!;
  return Number.isInteger(lo) && Number.isInteger(hi) ? Math.round((lo + hi) / 2) : (lo + hi) / 2;
}

/**
 * The median of values of one shape: numbers by their median (a count stays whole), a
 * boolean by majority (a tie is false: "steady" must hold in most repeats), objects field by
 * field, anything else (strings, lists, a null beside numbers) as the first repeat has it.
 */
function medianValue(vs: readonly unknown[]): unknown {
  const first = vs[0];
  if (typeof first === "number") {
    const nums = vs.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
    return nums.length === vs.length ? medianOf(nums) : first;
  }
  if (typeof first === "boolean") return vs.filter((v) => v === true).length * 2 > vs.length;
  if (first !== null && typeof first === "object" && !Array.isArray(first)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(first))
      out[k] = medianValue(vs.map((v) => (v as Record<string, unknown> | null)?.[k]));
    return out;
  }
  return first;
}

/** Each level's figures as their median over the repeats that measured it, in the first repeat's order. */
export function medianLevels(repeats: readonly (readonly LevelResult[])[]): LevelResult[] {
  if (repeats.length === 1) return [...repeats[0]!];
  const order = repeats[0] ?? [];
  return order.map((l) => {
    const same = repeats.map((r) => r.find((x) => x.level === l.level)).filter((x) => x !== undefined);
    return medianValue(same) as LevelResult;
  });
}

/** The points of each run a document holds: one per repeat, or the document's own. */
export function runPointsOf(doc: ResultDocument): Point[][] {
  if (doc.kind === "sweep" && doc.repeats && doc.repeats.length > 1)
    return doc.repeats.map((r) => sweepLevelPoints(doc, r.levels));
  return [documentPoints(doc)];
}
