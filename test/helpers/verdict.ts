/** A verdict for the comment's tests: head and base points, one run each, judged by the engine. */
import type { Point } from "../../src/shared/measures.ts";
import type { Rules } from "../../src/shared/rules.ts";
import { judgeRuns, type VerdictSummary } from "../../src/shared/verdict.ts";

export function pairVerdict(
  head: readonly Point[],
  base: readonly Point[],
  rules?: Rules,
): { summary: VerdictSummary; baseName: string } {
  const summary = judgeRuns(
    { runs: [[...base]], samples: null, kind: "run" },
    { runs: [[...head]], samples: null, kind: "run" },
    rules ? { rules } : {},
  );
  return { summary, baseName: "the file base.json" };
}
