/**
 * `tokenbench compare base.json [more-base.json ...] head.json`: the verdict engine
 * (shared/verdict.ts) on files, through the comparison every surface makes (shared/comparison.ts),
 * and its rows in words for a terminal or a Markdown file.
 */
import { type Comparison, compareDocuments } from "../../shared/comparison.ts";
import {
  environmentLine,
  evidenceLine,
  gateLine,
  headline,
  methodText,
  othersLine,
  rowCells,
  verdictWord,
} from "../../shared/verdict-text.ts";

export { type Comparison, compareDocuments };

/** The comparison as Markdown: the headline first, what it rests on, then one row per measure. */
export function compareMarkdown(s: Comparison, baseName: string): string {
  const withInterval = s.rows.some((r) => r.interval_pct !== null || r.interval_pp !== null);
  const env = environmentLine(s);
  const others = othersLine(s);
  const lines = [
    headline(s),
    ...(env ? ["", env] : []),
    "",
    `Judged ${evidenceLine(s, baseName)} (rules ${s.rules}). ${gateLine(s)}${others ? ` ${others}` : ""}`,
    "",
    `| benchmark | measure | base | head | Δ |${withInterval ? " interval |" : ""} method | verdict |`,
    `|---|---|---:|---:|---:|${withInterval ? "---|" : ""}---|---|`,
  ];
  for (const r of s.rows)
    lines.push(
      `| ${[...rowCells(r, withInterval), methodText(r), `${r.decided ? "gate: " : ""}${verdictWord(r)}`].join(" | ")} |`,
    );
  return lines.join("\n");
}
