/** The engine's verdict as the run and pull request pages show it (the comment's words, shared/verdict-text.ts). */
import type { CompareResponse } from "../shared/api-types.ts";
import { partName, splitRows, splitSource, whyLines } from "../shared/row-splits.ts";
import {
  consistencyLine,
  environmentLine,
  evidenceLine,
  gateLine,
  methodText,
  othersLine,
  rowCells,
  rowLabel,
  verdictWord,
} from "../shared/verdict-text.ts";
import type { VerdictRow } from "../shared/verdict-types.ts";
import { attr, esc } from "./common.ts";

/** The engine's summary as the run and PR pages show it: headline and evidence, then every row. */
export function verdictSection(cmp: CompareResponse | null): { summary: string; table: string } {
  if (cmp === null || (cmp.baseline_runs.length === 0 && cmp.base_kind !== "ab"))
    return {
      summary: `<section class="verdict"><p class="headline">${esc(cmp?.headline ?? "No baseline: the results service did not compare this run.")}</p></section>`,
      table: "",
    };
  const withInterval = cmp.rows.some((r) => r.interval_pct !== null || r.interval_pp !== null);
  const env = environmentLine(cmp);
  const answers = consistencyLine(cmp);
  const others = othersLine(cmp);
  const summary = `<section class="verdict" data-regressed="${cmp.counts.regressed}" data-gate="${attr(cmp.gate.status)}"><h2>Against ${esc(cmp.base_branch)}</h2>${env ? `<p class="env">${esc(env)}</p>` : ""}<p class="headline">${esc(cmp.headline)}</p>${answers ? `<p class="answers">${esc(answers)}</p>` : ""}<p class="muted">${cmp.rows.length} measures judged ${esc(evidenceLine(cmp, cmp.base_name))}; rules <code>${esc(cmp.rules)}</code>. ${esc(gateLine(cmp))}${others ? ` ${esc(others)}` : ""}</p></section>`;
  const table = `<h2>Every measure</h2><div class="scroll"><table class="verdicts"><thead><tr><th>benchmark</th><th>measure</th><th>baseline</th><th>this run</th><th>Δ</th>${withInterval ? "<th>interval</th>" : ""}<th>method</th><th>verdict</th></tr></thead><tbody>${cmp.rows
    .map(
      (row) =>
        `<tr data-verdict="${attr(row.verdict)}"${row.gated ? ' data-gated="true"' : ""}>${[...rowCells(row, withInterval), methodText(row)].map((c) => `<td>${esc(c)}</td>`).join("")}<td class="v v-${attr(row.verdict)}">${row.decided ? "<b>gate</b>: " : ""}${esc(verdictWord(row))}</td></tr>`,
    )
    .join("")}</tbody></table></div>`;
  return { summary: summary + whySection(cmp.rows), table };
}

/** The most rows drawn as bars (the lines say the rest). */
const MAX_BARS = 4;

/**
 * Why it moved: the lines every surface says, then per moved row a stacked bar of its parts for
 * the baseline and this run on one scale (widths in % of the larger total).
 */
function whySection(rows: readonly VerdictRow[]): string {
  const lines = whyLines(rows, rowLabel);
  if (lines.length === 0) return "";
  const bars = splitRows(rows)
    .slice(0, MAX_BARS)
    .map((r) => {
      const total = (side: "base" | "head") => r.split!.reduce((a, p) => a + p[side], 0);
      const scale = Math.max(total("base"), total("head"), 1e-9);
      const bar = (side: "base" | "head") =>
        `<div class="split-bar" data-side="${side}"><span class="split-side">${side === "base" ? "baseline" : "this run"}</span><span class="split-track">${r.split!.map((p) => `<span class="part part-${attr(partName(p.part))}" style="width:${((100 * p[side]) / scale).toFixed(2)}%" title="${attr(`${partName(p.part)} ${p[side].toFixed(1)} ms`)}"></span>`).join("")}</span><span class="split-total">${total(side).toFixed(1)} ms</span></div>`;
      return `<figure class="split" data-measure="${attr(r.measure)}" data-benchmark="${attr(r.benchmark)}"><figcaption>${esc(rowLabel(r))}${r.split_source === "metrics" ? " (the server's means)" : ""}</figcaption>${bar("base")}${bar("head")}</figure>`;
    });
  const names = [...new Set(splitRows(rows).flatMap((r) => r.split!.map((p) => partName(p.part))))];
  const legend = names.map((n) => `<span class="part part-${attr(n)} legend"></span> ${esc(n)}`).join(" ");
  return `<section class="why"><h2>Why it moved</h2><p class="muted">${esc(splitSource(rows))}. ${legend}</p><ul>${lines.map((l) => `<li>${esc(l)}</li>`).join("")}</ul>${bars.join("")}</section>`;
}
