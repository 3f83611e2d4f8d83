/**
 * A stored run judged against its base branch by the one engine (shared/comparison.ts), as the
 * CLI judges files: its base history is the last valid runs of the base branch on its testbed
 * (with none, its last runs without a valid level, whose rows are then not judged, as an invalid
 * base file's are: the gate cannot judge, where "no runs yet" would let it pass), as stored
 * documents (each with its stored samples), and its rules are the ones stored with it unless a
 * query names others. Ingest judges a run once and keeps the verdict; the compare
 * endpoint, the badges and the trend points read what was kept.
 */
import type { ResultDocument } from "../schema/v1.ts";
import type { CompareResponse, RunSummary } from "../shared/api-types.ts";
import { compareDocuments } from "../shared/comparison.ts";
import { type FailOn, parseRules } from "../shared/rules.ts";
import { summaryFails, VERDICT_DEFAULTS, type VerdictSummary } from "../shared/verdict.ts";
import { headline } from "../shared/verdict-text.ts";
import { baseRuns, type Db, runSamples } from "./db.ts";

/** What the verdict may be asked to differ by (the compare endpoint's query). */
export interface JudgeOptions {
  baseBranch: string | null;
  n: number;
  thresholds: string | null;
  gate: string | null;
  fwerPct: number | null;
  fallbackPct: number;
  confidence: number;
  minHistory: number;
}

/** The base runs a verdict reads: the last 30 (the gate's power grows with them; change points cut older ones). */
export const BASE_RUNS = 30;

export const DEFAULT_JUDGE: JudgeOptions = {
  baseBranch: null,
  n: BASE_RUNS,
  thresholds: null,
  gate: null,
  fwerPct: null,
  fallbackPct: VERDICT_DEFAULTS.fallbackPct,
  confidence: VERDICT_DEFAULTS.confidence,
  minHistory: VERDICT_DEFAULTS.minHistory,
};

/** Whether a query asks for anything but the kept verdict (its base branch, its rules, its history). */
export function overrides(q: JudgeOptions, storedBase: string): boolean {
  return (
    (q.baseBranch !== null && q.baseBranch !== storedBase) ||
    q.n !== DEFAULT_JUDGE.n ||
    q.thresholds !== null ||
    q.gate !== null ||
    q.fwerPct !== null ||
    q.fallbackPct !== DEFAULT_JUDGE.fallbackPct ||
    q.confidence !== DEFAULT_JUDGE.confidence ||
    q.minHistory !== DEFAULT_JUDGE.minHistory
  );
}

/** The branch a run is judged against: its pull request's base, else its own branch's history. */
export const judgedAgainst = (doc: ResultDocument): string =>
  doc.git?.base_branch ?? doc.git?.branch ?? "main";

export interface Judged {
  summary: VerdictSummary;
  baseBranch: string;
  baseline: string[];
  judgedWith: CompareResponse["judged_with"];
}

/**
 * `doc` (stored as run `id`, or about to be: null) judged against its base branch. `samples` are
 * the head's per-request samples (the upload's, or the stored ones).
 */
export async function judgeStoredRun(
  db: Db,
  head: { id: number | null; repository: string; testbedFingerprint: string; before: string },
  doc: ResultDocument,
  q: JudgeOptions = DEFAULT_JUDGE,
): Promise<Judged> {
  const baseBranch = q.baseBranch ?? judgedAgainst(doc);
  const valid = await baseRuns(db, head, baseBranch, q.n);
  const rows = valid.length > 0 ? valid : await baseRuns(db, head, baseBranch, q.n, false);
  const one = rows.length === 1;
  const bases = await Promise.all(
    rows.map(async (r) => {
      const d = JSON.parse(r.document_json) as ResultDocument;
      // One base run is judged as its file would be: its stored samples stand in for its records.
      return { id: r.public_id, doc: one ? { ...d, samples: await runSamples(db, r.id) } : d };
    }),
  );
  const stored = doc.verdict_rules ?? null;
  const thresholds = q.thresholds ?? stored?.thresholds ?? null;
  const gate = q.gate ?? stored?.gate ?? null;
  const fwerPct = q.fwerPct ?? stored?.fwer_pct ?? VERDICT_DEFAULTS.fwerPct;
  const summary = compareDocuments(
    bases,
    { id: "head", doc },
    {
      rules: parseRules(thresholds),
      gate,
      fwerPct,
      fallbackPct: q.fallbackPct,
      confidence: q.confidence,
      minHistory: q.minHistory,
    },
  );
  return {
    summary,
    baseBranch,
    baseline: rows.map((r) => r.public_id),
    judgedWith: { thresholds, gate, fwer_pct: fwerPct },
  };
}

/** The compare endpoint's body from a verdict. */
export function compareBody(run: RunSummary, j: Judged, failOn: FailOn): CompareResponse {
  const none = j.baseline.length === 0 && j.summary.base_kind !== "ab";
  return {
    ...j.summary,
    head: run,
    base_branch: j.baseBranch,
    baseline_runs: j.baseline,
    base_name: j.baseline.length === 1 ? `the last run of ${j.baseBranch}` : j.baseBranch,
    headline: !none
      ? headline(j.summary)
      : `No runs of ${j.baseBranch} on this testbed yet: nothing to compare against.`,
    fail_on: failOn,
    failed: summaryFails(j.summary, failOn),
    judged_with: j.judgedWith,
  };
}
