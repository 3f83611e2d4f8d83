/**
 * `/r/{owner}/{repo}/pull/{n}`: a pull request on a page of its own. Its newest run's verdict
 * against the base branch first (the comment's words), then its runs drawn on the base branch's
 * trends of the key measures at the highest closed-loop level, with the band the base branch's
 * recent runs give, then its frontier over the base branch's recent ones, then every measure's row,
 * then each of its runs.
 */
import type { ResultDocument } from "../schema/v1.ts";
import type { CompareResponse } from "../shared/api-types.ts";
import { frontierOf } from "../shared/frontier.ts";
import { benchmarkName } from "../shared/measures.ts";
import { invalidLine } from "../shared/verdict-text.ts";
import { api, attr, esc, frontierImage, setTitle } from "./common.ts";
import { BASELINE_N, drawTrend } from "./trends.ts";
import { verdictSection } from "./verdict-section.ts";

/** What a reviewer reads first: throughput and TTFT p95 (the gated key measures), in this order. */
const KEY_MEASURES = ["output_tok_s", "ttft_p95_ms"];

interface PrRun {
  id: string;
  created_at: string;
  commit_sha: string | null;
  branch: string | null;
  testbed: { name: string; fingerprint: string };
}

/** The benchmark a change shows most in: the highest closed-loop level, else the highest level. */
function keyBenchmark(doc: ResultDocument): string | null {
  const levels = [...doc.levels].sort((a, b) => a.level - b.level);
  const closed = levels.filter((l) => l.mode === "closed");
  const top = closed[closed.length - 1] ?? levels[levels.length - 1];
  return top ? benchmarkName(top) : null;
}

export async function pullPage(repo: string, pr: number): Promise<void> {
  const body = setTitle(
    `PR #${pr}`,
    `<a href="/">tokenbench</a> / <a href="/r/${attr(repo)}">${esc(repo)}</a> / PR #${pr}`,
  );
  const { runs } = await api<{ runs: PrRun[] }>(`/api/v1/repos/${repo}/runs?pr=${pr}&limit=20`);
  if (runs.length === 0) {
    body.innerHTML = `<p class="empty">No runs of pull request #${pr} yet.</p>`;
    return;
  }
  const newest = runs[0]!;
  const [cmp, run] = await Promise.all([
    api<CompareResponse>(`/api/v1/repos/${repo}/compare?head=${newest.id}`).catch(() => null),
    api<{ document: ResultDocument }>(`/api/v1/runs/${newest.id}`),
  ]);
  const doc = run.document;
  const verdict = verdictSection(cmp);
  const notValid = invalidLine(doc);
  const baseBranch = cmp?.base_branch ?? "main";
  const branch = newest.branch ?? baseBranch;
  const benchmark = keyBenchmark(doc);
  const gh = `https://github.com/${repo}`;
  const meta = `<p class="muted">${runs.length} run${runs.length > 1 ? "s" : ""} · branch ${esc(branch)} into ${esc(baseBranch)} · testbed ${esc(newest.testbed.name)} · newest <a class="run" href="/runs/${attr(newest.id)}">run ${esc(newest.id)}</a> · <a class="pr" href="${attr(`${gh}/pull/${pr}`)}">on GitHub</a></p>`;
  const trends = benchmark
    ? `<h2>On ${esc(baseBranch)}'s trend: ${esc(benchmark)}</h2><p class="muted">This pull request's runs in colour over ${esc(baseBranch)}'s in grey; the band is where ${esc(baseBranch)}'s next run is expected if nothing changed (up to its last ${BASELINE_N} valid runs; each chart says how many); ○ a run of this pull request the band does not hold.</p><div class="grid" id="pr-trends"></div>`
    : "";
  const frontier = frontierOf(doc)
    ? frontierImage(newest.id, "the newest run of this pull request", baseBranch)
    : "";
  const list = `<h2>Runs of PR #${pr}</h2><ul class="pr-runs">${runs
    .map(
      (r) =>
        `<li><a class="run" href="/runs/${attr(r.id)}">${esc(r.created_at.replace("T", " ").slice(0, 19))}</a> <code>${esc((r.commit_sha ?? "").slice(0, 7))}</code></li>`,
    )
    .join("")}</ul>`;
  body.innerHTML = `${meta}${verdict.summary}${notValid ? `<p class="invalid">${esc(notValid)}</p>` : ""}${trends}${frontier}${verdict.table}${list}`;
  if (!benchmark) return;
  const grid = document.getElementById("pr-trends")!;
  await Promise.all(
    KEY_MEASURES.map((measure) =>
      drawTrend(grid, {
        repo,
        benchmark,
        measure,
        testbed: newest.testbed.fingerprint,
        branch,
        baseBranch,
      }),
    ),
  );
}
