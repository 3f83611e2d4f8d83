/** The engine's verdict as the run and pull request pages show it (the comment's words, shared/verdict-text.ts). */
import type { CompareResponse } from "../shared/api-types.ts";
import {
  consistencyLine,
  environmentLine,
  evidenceLine,
  gateLine,
  methodText,
  othersLine,
  rowCells,
  verdictWord,
} from "../shared/verdict-text.ts";
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
  return { summary, table };
}
