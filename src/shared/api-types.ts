/**
 * The results service's response bodies, shared by the Worker that writes them and the Action
 * and the dashboard that read them.
 */

import type { ChangePoint } from "./change-points.ts";
import type { CompareRow } from "./compare.ts";
import type { MeasureDef } from "./measures.ts";
import type { FailOn } from "./rules.ts";
import type { Thresholds, Verdict } from "./statistics.ts";

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

export interface CompareResponse {
  head: RunSummary;
  base_branch: string;
  baseline_runs: string[];
  thresholds: Thresholds;
  /** The rules that judged the rows, normalised (`ttft_p95_ms=+10%, *=t-test`). */
  rules: string;
  fail_on: FailOn;
  /** Whether the rows fail the check under fail_on. */
  failed: boolean;
  counts: Record<Verdict, number>;
  rows: CompareRow[];
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
}

export interface ChangePointsResponse {
  repository: string;
  benchmark: string;
  measure: MeasureDef;
  branch: string;
  /** Runs of the series searched, oldest first. */
  points: number;
  min_segment: number;
  p_value: number;
  change_points: (ChangePoint & { run_id: string; commit_sha: string | null; created_at: string })[];
}
