/**
 * Documents compared as every surface compares them (`tokenbench compare`, the Action's baseline
 * file or artifact, the service): one base document is one run (its repeats or its per-request
 * samples the evidence), several are a history; a base that measured another workload is no
 * baseline at all, named with the fields that differ (unless allowed). Pure.
 */
import type { ResultDocument } from "../schema/v1.ts";
import { documentEvidence, historyEvidence, NO_EVIDENCE } from "./evidence.ts";
import { judgeRuns } from "./verdict.ts";
import type { VerdictOptions, VerdictSummary } from "./verdict-types.ts";
import { workloadDiff } from "./workload.ts";

export interface Side {
  id: string;
  doc: ResultDocument;
}

export interface Comparison extends VerdictSummary {
  /** Base documents left out because they measured another workload, with the fields that differ. */
  other_workloads: { base: string; fields: { field: string; base: unknown; head: unknown }[] }[];
}

const show = (x: unknown) => JSON.stringify(x)?.slice(0, 40) ?? "null";

/** "max_tokens 64 vs 128; ignore_eos false vs true" */
export function workloadText(fields: Comparison["other_workloads"][number]["fields"]): string {
  return fields.map((d) => `${d.field} ${show(d.base)} vs ${show(d.head)}`).join("; ");
}

export function compareDocuments(
  bases: readonly Side[],
  head: Side,
  opts: VerdictOptions & { allowDifferentWorkloads?: boolean } = {},
): Comparison {
  const other: Comparison["other_workloads"] = [];
  const like = bases.filter((b) => {
    const d = workloadDiff(b.doc, head.doc).map((x) => ({ field: x.field, base: x.a, head: x.b }));
    if (d.length > 0 && !opts.allowDifferentWorkloads) other.push({ base: b.id, fields: d });
    return d.length === 0 || opts.allowDifferentWorkloads;
  });
  const base =
    like.length === 0
      ? NO_EVIDENCE
      : like.length === 1
        ? documentEvidence(like[0]!.doc, like[0]!.id)
        : historyEvidence(like);
  const summary = judgeRuns(base, documentEvidence(head.doc, head.id), opts);
  const note =
    like.length === 0 && other.length > 0
      ? `the base measured another workload (${workloadText(other[0]!.fields)})`
      : summary.baseline_note;
  return { ...summary, baseline_note: note, other_workloads: other };
}
