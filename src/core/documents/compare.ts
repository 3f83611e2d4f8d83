/**
 * `tokenbench compare base.json [more-base.json ...] head.json`: the verdict engine
 * (shared/verdict.ts) on files, through the comparison every surface makes (shared/comparison.ts),
 * and its rows in words for a terminal or a Markdown file.
 */
import type { ResultDocument } from "../../schema/v1.ts";
import { type Comparison, compareDocuments } from "../../shared/comparison.ts";
import { splitSource, whyLines } from "../../shared/row-splits.ts";
import {
  consistencyLine,
  environmentLine,
  evidenceLine,
  gateLine,
  headline,
  invalidLine,
  methodText,
  othersLine,
  rowCells,
  rowLabel,
  verdictWord,
} from "../../shared/verdict-text.ts";

export { type Comparison, compareDocuments };

/**
 * The comparison as Markdown: the headline first, what differs beside it (answers, environment,
 * levels not valid), what it rests on, then one row per measure.
 */
export function compareMarkdown(s: Comparison, baseName: string, head: ResultDocument | null = null): string {
  const withInterval = s.rows.some((r) => r.interval_pct !== null || r.interval_pp !== null);
  const env = environmentLine(s);
  const answers = consistencyLine(s);
  const others = othersLine(s);
  const notValid = head ? invalidLine(head) : null;
  const why = whyLines(s.rows, rowLabel);
  const lines = [
    headline(s),
    ...(answers ? ["", answers] : []),
    ...(env ? ["", env] : []),
    ...(notValid ? ["", notValid] : []),
    "",
    `Judged ${evidenceLine(s, baseName)} (rules ${s.rules}). ${gateLine(s)}${others ? ` ${others}` : ""}`,
    "",
    ...(why.length > 0 ? [`Why it moved (${splitSource(s.rows)}):`, ...why.map((w) => `- ${w}`), ""] : []),
    `| benchmark | measure | base | head | Δ |${withInterval ? " interval |" : ""} method | verdict |`,
    `|---|---|---:|---:|---:|${withInterval ? "---|" : ""}---|---|`,
  ];
  for (const r of s.rows)
    lines.push(
      `| ${[...rowCells(r, withInterval), methodText(r), `${r.decided ? "gate: " : ""}${verdictWord(r)}`].join(" | ")} |`,
    );
  return lines.join("\n");
}
