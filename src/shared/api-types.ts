/**
 * The results service's response bodies, shared by the Worker that writes them and the Action
 * and the dashboard that read them.
 */

import type { ChangePoint } from "./change-points.ts";
import type { MeasureDef } from "./measures.ts";
import type { FailOn } from "./rules.ts";
import type { VerdictSummary } from "./verdict.ts";

export interface RunSummary {
  id: string;
  repository: string;
  kind: string;
  branch: string | null;
  testbed: { name: string; fingerprint: string };
  commit_sha: string | null;
  pr_number: number | null;
  workflow_run_id: string | null;
  run_attempt: number | null;
  /** When the service received the run: history is ordered by it. */
  created_at: string;
  ingested_at: string;
  /** The document's own `created_at` (when the uploader says it measured), kept as data. */
  measured_at: string | null;
}

export interface IngestResponse {
  run: RunSummary;
  created: boolean;
  points: number;
  url: string;
}

/** The verdict engine's summary (shared/verdict.ts) for a stored run against its base branch. */
export interface CompareResponse extends VerdictSummary {
  head: RunSummary;
  base_branch: string;
  baseline_runs: string[];
  /** How the evidence line names the base ("the last run of main", or "main" for its runs). */
  base_name: string;
  /** The one headline (shared/verdict-text.ts), as the PR comment and the terminal word it. */
  headline: string;
  fail_on: FailOn;
  /** Whether the comparison fails the check under fail_on. */
  failed: boolean;
  /** The rules it was judged with: the run's own (stored with it) unless the query gave others. */
  judged_with: { thresholds: string | null; gate: string | null; fwer_pct: number };
}

export interface SeriesResponse {
  repository: string;
  benchmark: string;
  measure: MeasureDef;
  points: SeriesPoint[];
}

export interface SeriesPoint {
  value: number;
  created_at: string;
  run_id: string;
  commit_sha: string | null;
  testbed: string;
  branch: string | null;
  /** The verdict its run was judged with when it arrived (null: judged before verdicts were kept). */
  verdict: string | null;
  /** 0: the run is not valid (it is in no base history and moves no trend). */
  valid: number;
  pr_number: number | null;
}

export interface ChangePointsResponse {
  repository: string;
  benchmark: string;
  measure: MeasureDef;
  branch: string;
  /** Runs of the series searched, oldest first (valid runs only). */
  points: number;
  /** Runs of the series left out because they are not valid (they move no change point). */
  invalid_left_out: number;
  min_segment: number;
  p_value: number;
  change_points: (ChangePoint & { run_id: string; commit_sha: string | null; created_at: string })[];
}
