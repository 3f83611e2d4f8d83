/**
 * Seeded trials of the verdict engine on synthetic documents: the schema's example sweep, its
 * TTFT p99 at c=4 drawn per run with a given run-to-run noise, a base history of `history` runs
 * (or one base run) and a head of `repeats` repeats (or one run), the head's true value moved by
 * `changePct`. What share of trials the engine flags, by method.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { compareDocuments } from "../../src/core/tools/compare.ts";
import { parseResultDocument, type ResultDocument } from "../../src/schema/v1.ts";
import { rng } from "../../src/shared/random.ts";

const EXAMPLE = parseResultDocument(
  JSON.parse(readFileSync(resolve(import.meta.dirname, "../../schema/examples/closed-sweep.json"), "utf8")),
);

export interface TrialSetup {
  /** Run-to-run coefficient of variation of TTFT p99, in %. */
  noisePct: number;
  /** The head's true change, in %. */
  changePct: number;
  /** Base runs (1: one base document). */
  history: number;
  /** Head repeats (1: one head run). */
  repeats: number;
  trials: number;
  seed: number;
}

export interface TrialRates {
  /** Trials whose TTFT p99 row was judged a change in the direction of `changePct` (any change when 0). */
  flagged: number;
  rate: number;
  tooNoisy: number;
  methods: Record<string, number>;
}

const LEVEL = 4;
const MEASURE = "ttft_p99_ms";

function gauss(r: () => number): number {
  // Box–Muller: two uniforms, one standard normal.
  const u = Math.max(r(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

function levelsAt(p99: number) {
  return EXAMPLE.levels.map((l) => (l.level === LEVEL ? { ...l, ttft_ms: { ...l.ttft_ms, p99 } } : l));
}

function docOf(levels: ResultDocument["levels"], repeats?: ResultDocument["levels"][]): ResultDocument {
  return {
    ...EXAMPLE,
    requests: null,
    levels,
    ...(repeats ? { repeats: repeats.map((lv, index) => ({ index, levels: lv })) } : {}),
  };
}

export function trialRates(s: TrialSetup): TrialRates {
  const r = rng(s.seed);
  const truth = EXAMPLE.levels.find((l) => l.level === LEVEL)!.ttft_ms.p99!;
  const draw = (centre: number) => centre * (1 + (s.noisePct / 100) * gauss(r));
  let flagged = 0;
  let tooNoisy = 0;
  const methods: Record<string, number> = {};
  for (let t = 0; t < s.trials; t++) {
    const bases = Array.from({ length: s.history }, () => docOf(levelsAt(draw(truth))));
    const headCentre = truth * (1 + s.changePct / 100);
    const reps = Array.from({ length: s.repeats }, () => levelsAt(draw(headCentre)));
    const head = s.repeats > 1 ? docOf(levelsAt(headCentre), reps) : docOf(reps[0]!);
    const row = compareDocuments(bases, head).rows.find((x) => x.level === LEVEL && x.measure === MEASURE)!;
    methods[row.method] = (methods[row.method] ?? 0) + 1;
    if (row.verdict === "too_noisy") tooNoisy++;
    const hit =
      s.changePct > 0
        ? row.verdict === "regressed"
        : s.changePct < 0
          ? row.verdict === "improved"
          : row.verdict === "regressed" || row.verdict === "improved";
    if (hit) flagged++;
  }
  return { flagged, rate: flagged / s.trials, tooNoisy, methods };
}
