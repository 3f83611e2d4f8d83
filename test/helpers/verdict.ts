/** A verdict for the comment's tests: head and base points, one run each, judged by the engine. */
import { pointsRun } from "../../src/shared/evidence.ts";
import type { Point } from "../../src/shared/measures.ts";
import type { Rules } from "../../src/shared/rules.ts";
import { judgeRuns, type VerdictSummary } from "../../src/shared/verdict.ts";

export function pairVerdict(
  head: readonly Point[],
  base: readonly Point[],
  rules?: Rules,
): { summary: VerdictSummary; baseName: string } {
  const summary = judgeRuns(
    { kind: "run", run: pointsRun("base", base), samples: null },
    { kind: "run", run: pointsRun("head", head), samples: null },
    rules ? { rules } : {},
  );
  return { summary, baseName: "the file base.json" };
}
