/**
 * `tokenbench compare base.json [more-base.json ...] head.json`: the verdict engine
 * (shared/verdict.ts) on files, and its rows in words for a terminal or a Markdown file. One base
 * file is one run (its repeats or per-request samples are the evidence); several are a history.
 */
import type { ResultDocument } from "../../schema/v1.ts";
import { documentPoints } from "../../shared/measures.ts";
import {
  documentEvidence,
  type Evidence,
  judgeRuns,
  type VerdictOptions,
  type VerdictSummary,
} from "../../shared/verdict.ts";
import { evidenceLine, headline, METHOD_TEXT, rowCells, verdictWord } from "../../shared/verdict-text.ts";

/** One base document is a run; several are a history of runs (each its headline figures). */
export function baseEvidence(bases: readonly ResultDocument[]): Evidence {
  if (bases.length === 1) return documentEvidence(bases[0]!);
  return { runs: bases.map(documentPoints), samples: null, kind: "history" };
}

export function compareDocuments(
  bases: readonly ResultDocument[],
  head: ResultDocument,
  opts: VerdictOptions = {},
): VerdictSummary {
  return judgeRuns(baseEvidence(bases), documentEvidence(head), opts);
}

/** The comparison as Markdown: the headline first, what it rests on, then one row per measure. */
export function compareMarkdown(s: VerdictSummary, baseName: string): string {
  const withInterval = s.rows.some((r) => r.interval_pct !== null);
  const lines = [
    headline(s.rows),
    "",
    `Judged ${evidenceLine(s, baseName)} (rules ${s.rules}).`,
    "",
    `| benchmark | measure | base | head | Δ |${withInterval ? " interval |" : ""} method | verdict |`,
    `|---|---|---:|---:|---:|${withInterval ? "---|" : ""}---|---|`,
  ];
  for (const r of s.rows)
    lines.push(`| ${[...rowCells(r, withInterval), METHOD_TEXT[r.method], verdictWord(r)].join(" | ")} |`);
  return lines.join("\n");
}
