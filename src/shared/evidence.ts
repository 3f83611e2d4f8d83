/**
 * What one side of a comparison knows, as the verdict engine (shared/verdict.ts) reads it: one or
 * more runs' figures, each with its levels' facts (requests, errors, finish reasons, validity),
 * and how the runs relate (one run, the repeats of one job, a history of jobs, or the blocks of
 * an interleaved A/B job). Built from documents the same way on every surface. Pure.
 */
import type { LevelResult, ResultDocument } from "../schema/v1.ts";
import { environmentFacts } from "./environment-diff.ts";
import { benchmarkName, documentPoints, type Point, sweepLevelPoints } from "./measures.ts";
import { medianLevels } from "./repeats.ts";
import { type Grouped, levelSamples } from "./samples.ts";

/** One reason a level's figures are not what they claim (core/results/validity.ts writes them). */
export interface Reason {
  code: string;
  /** Measure families (shared/measures.ts) or measure names it invalidates. */
  affects: readonly string[];
  text: string;
}

/** What a run knows of one level beyond its figures. */
export interface LevelFacts {
  benchmark: string;
  level: number | null;
  requests: number;
  errors: number;
  /** Output tokens the level counted (a window rate moves by one event's tokens at least). */
  tokens: number;
  /** Requests judged against the SLOs (slo_pass_pct's denominator). */
  sloJudged: number;
  finish: Readonly<Record<string, number>> | null;
  reasons: readonly Reason[];
}

/** One run (a job, a repeat or an A/B block): its figures and facts. */
export interface RunFigures {
  id: string;
  createdAt: string | null;
  points: readonly Point[];
  facts: ReadonlyMap<string, LevelFacts>;
  /**
   * Why no level of the run is valid, or null: such a run never enters a base history (one with a
   * valid level does, and its other levels' rows leave it out).
   */
  invalid: string | null;
  /** What it ran on (shared/environment-diff.ts), where known. */
  env?: Record<string, string | null>;
  /** Its answers to the fixed prompts of `--consistency` (shared/consistency.ts), where it asked them. */
  answers?: ResultDocument["consistency"] | null;
}

export type SampleSource = (level: number, measure: string) => Grouped | null;

export type Evidence =
  /** One run, with its per-request samples (the bootstrap's input) when it has them. */
  | { kind: "run"; run: RunFigures; samples: SampleSource | null }
  /** The repeats of one job (`--repeats N`): within-job evidence. */
  | { kind: "repeats"; runs: readonly RunFigures[] }
  /** Runs of a branch, oldest first, each one job: sees the noise between jobs. */
  | { kind: "history"; runs: readonly RunFigures[] }
  /** One job that alternated the base's and the head's server in blocks (`--ab`). */
  | { kind: "ab"; pairs: readonly { base: RunFigures; head: RunFigures }[] }
  | { kind: "none" };

export const NO_EVIDENCE: Evidence = { kind: "none" };

/** The runs of an evidence, in the order they count (a history's oldest first). */
export function runsOf(e: Evidence): readonly RunFigures[] {
  switch (e.kind) {
    case "run":
      return [e.run];
    case "repeats":
    case "history":
      return e.runs;
    case "ab":
      return e.pairs.map((p) => p.head);
    case "none":
      return [];
  }
}

function reasonsOf(l: LevelResult): Reason[] {
  return (l.validity?.reasons ?? []).map((r) => ({ code: r.code, affects: r.affects, text: r.text }));
}

/** A level's facts, as its document states them. */
export function levelFacts(l: LevelResult): LevelFacts {
  return {
    benchmark: benchmarkName(l),
    level: l.level,
    requests: l.requests,
    errors: l.errors,
    tokens: l.completion_tokens_total,
    sloJudged: l.ttft_ms.n,
    finish: l.finish_reasons ?? null,
    reasons: reasonsOf(l),
  };
}

/**
 * Why a run says nothing valid, in words, or null when a level of it is valid: a base history
 * keeps a run for its valid levels (the rows of the others leave it out, row by row).
 */
function runInvalid(doc: ResultDocument, levels: readonly LevelResult[]): string | null {
  if (levels.some((l) => l.validity?.status !== "invalid")) return null;
  const bad = levels[0];
  if (bad?.validity) return `level ${bad.level}: ${bad.validity.reasons[0]?.text ?? "invalid"}`;
  const r = doc.validity?.reasons[0];
  return r ? `level ${r.level}: ${r.text}` : doc.validity?.status === "invalid" ? "invalid" : null;
}

/** One run's figures from levels of a document (its own, a repeat's, an A/B block's). */
export function runFigures(
  doc: ResultDocument,
  levels: readonly LevelResult[],
  id: string,
  points: readonly Point[] = sweepLevelPoints(doc, levels),
): RunFigures {
  return {
    id,
    createdAt: doc.created_at,
    points,
    facts: new Map(levels.map((l) => [benchmarkName(l), levelFacts(l)])),
    invalid: runInvalid(doc, levels),
    env: environmentFacts(doc),
    answers: doc.consistency ?? null,
  };
}

/** A document as evidence: its A/B blocks, its repeats, or the run itself (with its samples). */
export function documentEvidence(doc: ResultDocument, id = "head"): Evidence {
  if (doc.kind === "sweep" && doc.ab && doc.ab.blocks.length >= 2) {
    const pairs = doc.ab.pairs.map((p) => {
      const block = (i: number) => doc.ab!.blocks[i]!;
      return {
        base: runFigures(doc, block(p.base).levels, `${id}#${p.base}`),
        head: runFigures(doc, block(p.head).levels, `${id}#${p.head}`),
      };
    });
    return { kind: "ab", pairs };
  }
  if (doc.kind === "sweep" && doc.repeats && doc.repeats.length > 1)
    return {
      kind: "repeats",
      runs: doc.repeats.map((r) => runFigures(doc, r.levels, `${id}#${r.index}`)),
    };
  const run = runFigures(doc, doc.levels, id, documentPoints(doc));
  const samples: SampleSource = (level, measure) => levelSamples(doc, level, measure);
  return { kind: "run", run, samples };
}

/**
 * Several documents of a branch as a history, oldest first: each one job, its figures its
 * headline levels (a document's repeats are its job's figures by their median).
 */
export function historyEvidence(docs: readonly { id: string; doc: ResultDocument }[]): Evidence {
  const runs = [...docs]
    .sort((a, b) => a.doc.created_at.localeCompare(b.doc.created_at))
    .map(({ id, doc }) => {
      const levels =
        doc.repeats && doc.repeats.length > 1 ? medianLevels(doc.repeats.map((r) => r.levels)) : doc.levels;
      return runFigures(
        doc,
        levels,
        id,
        doc.kind === "sweep" ? documentPoints({ ...doc, levels }) : documentPoints(doc),
      );
    });
  return runs.length > 0 ? { kind: "history", runs } : NO_EVIDENCE;
}

/** A run known only by its points (tests, the service's series): no facts, valid. */
export function pointsRun(id: string, points: readonly Point[], createdAt: string | null = null): RunFigures {
  return { id, createdAt, points, facts: new Map(), invalid: null };
}
