/**
 * The pull-request comment: a table of key measures (baseline, head, delta %, verdict), a compact
 * Mermaid chart of output tok/s and TTFT p95 against level, links; kept under GitHub's limit.
 * Sticky: one comment per testbed and benchmark set, found by a hidden marker, updated in place.
 */
import { createHash } from "node:crypto";
import { TokenbenchError } from "../schema/errors.ts";
import type { ResultDocument } from "../schema/v1.ts";
import type { CompareRow } from "../shared/compare.ts";
import { benchmarkName, documentPoints } from "../shared/measures.ts";

export const GITHUB_COMMENT_LIMIT = 65_536;
const BUDGET = 60_000; // headroom under the limit

export const KEY_MEASURES = [
  "output_tok_s",
  "ttft_p50_ms",
  "ttft_p95_ms",
  "itl_p50_ms",
  "tpot_p50_ms",
  "goodput_req_s",
  "error_rate",
];

const MARK: Record<string, string> = {
  improved: "🟢 improved",
  regressed: "🔴 regressed",
  unchanged: "⚪ unchanged",
  no_baseline: "➖ no baseline",
};

/**
 * The hidden marker that finds this comment again: a hash of the testbed and benchmark set, so no
 * name (chosen by whoever controls the server or the artifact) can forge or break it.
 */
export function stickyMarker(testbed: string, benchmarkSet: string): string {
  const h = createHash("sha256").update(`${testbed}\u0000${benchmarkSet}`).digest("hex").slice(0, 16);
  return `<!-- tokenbench:${h} -->`;
}

/** Characters that mean something to Markdown or HTML, written as numeric character references. */
const MD_SPECIAL = /[\\`*_{}[\]()<>#+!|~@&"$]/g;

/**
 * An untrusted string (a model name from the server under test, a testbed or branch name from an
 * artifact) as inert inline text: one line, at most `max` characters, every Markdown and HTML
 * special written as a character reference, so it can open no heading, link, image, mention,
 * task list, code span, table cell, HTML tag or comment.
 */
export function mdText(s: string, max = 80): string {
  const flat = s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
  const cut = [...flat].length > max ? `${[...flat].slice(0, max - 1).join("")}…` : flat;
  return cut.replace(MD_SPECIAL, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A commit sha as shown in the comment, or null when it is not one. */
const shortSha = (s: string | null | undefined): string | null =>
  s && /^[0-9a-f]{7,64}$/i.test(s) ? s.slice(0, 7) : null;

export function benchmarkSet(doc: ResultDocument): string {
  if (doc.kind === "profile") return "profile";
  const c = doc.config!;
  return `${c.mode} ${c.levels.join(",")}`;
}

const fmt = (v: number | null | undefined, unit = ""): string => {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  const s = a >= 1000 ? v.toFixed(0) : a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
  return unit ? `${s} ${unit}` : s;
};

export interface CommentInput {
  doc: ResultDocument;
  testbed: string;
  rows: CompareRow[] | null;
  baseBranch: string | null;
  baselineRuns: number;
  links: { run?: string | null; dashboard?: string | null; artifact?: string | null };
}

function mermaidChart(
  title: string,
  yLabel: string,
  levels: number[],
  head: (number | null)[],
  base: (number | null)[],
): string {
  const n = (xs: (number | null)[]) => xs.map((x) => (x === null ? 0 : Number(x.toFixed(2)))).join(", ");
  const lines = [
    "```mermaid",
    "xychart-beta",
    `  title "${title}"`,
    `  x-axis "level" [${levels.join(", ")}]`,
    `  y-axis "${yLabel}"`,
  ];
  if (base.some((x) => x !== null)) lines.push(`  line [${n(base)}]`);
  lines.push(`  line [${n(head)}]`, "```");
  return lines.join("\n");
}

export function renderComment(input: CommentInput, limit = BUDGET): string {
  const { doc, rows } = input;
  const marker = stickyMarker(input.testbed, benchmarkSet(doc));
  const points = documentPoints(doc);
  const byKey = new Map((rows ?? []).map((r) => [`${r.benchmark}\u0000${r.measure}`, r]));
  const regressions = (rows ?? []).filter((r) => r.verdict === "regressed").length;
  const improvements = (rows ?? []).filter((r) => r.verdict === "improved").length;
  const head: string[] = [marker, `### tokenbench: ${mdText(doc.target.model)}`, ""];
  const short = shortSha(doc.git?.sha);
  const sha = short ? `\`${short}\`` : "this run";
  const baseBranch = `<code>${mdText(input.baseBranch ?? "", 60)}</code>`;
  head.push(
    `Testbed **${mdText(input.testbed)}**, ${mdText(benchmarkSet(doc), 120)}, ${sha}` +
      (rows === null
        ? " (no baseline: results service not reachable or not configured)"
        : input.baselineRuns > 0
          ? ` vs the last ${input.baselineRuns} run(s) of ${baseBranch}: **${regressions} regressed**, ${improvements} improved.`
          : ` (no runs of ${baseBranch} on this testbed yet: nothing to compare against).`),
    "",
  );
  const tableHead = [
    "| benchmark | measure | baseline | head | Δ % | verdict |",
    "|---|---|---:|---:|---:|---|",
  ];
  const tableRows: { line: string; priority: number }[] = [];
  for (const p of points) {
    if (!KEY_MEASURES.includes(p.measure) && doc.kind !== "profile") continue;
    const r = byKey.get(`${p.benchmark}\u0000${p.measure}`);
    const verdict = r?.verdict ?? "no_baseline";
    tableRows.push({
      line: `| ${p.benchmark} | ${p.measure} | ${fmt(r?.baseline_mean)} | ${fmt(p.value)} | ${r?.delta_pct === null || r?.delta_pct === undefined ? "–" : `${r.delta_pct > 0 ? "+" : ""}${r.delta_pct.toFixed(1)}`} | ${MARK[verdict]} |`,
      priority: verdict === "regressed" ? 0 : verdict === "improved" ? 1 : 2,
    });
  }
  const charts: string[] = [];
  if (doc.kind === "sweep" && doc.levels.length > 1) {
    const levels = doc.levels.map((l) => l.level);
    const bench = doc.levels.map(benchmarkName);
    const baseOf = (m: string) => bench.map((b) => byKey.get(`${b}\u0000${m}`)?.baseline_mean ?? null);
    charts.push(
      mermaidChart(
        "output tok/s vs level (base, head)",
        "tok/s",
        levels,
        doc.levels.map((l) => l.output_tok_s),
        baseOf("output_tok_s"),
      ),
    );
    charts.push(
      mermaidChart(
        "TTFT p95 (ms) vs level (base, head)",
        "ms",
        levels,
        doc.levels.map((l) => l.ttft_ms.p95),
        baseOf("ttft_p95_ms"),
      ),
    );
  }
  const links = [
    input.links.run ? `[workflow run](${input.links.run})` : null,
    input.links.dashboard ? `[dashboard](${input.links.dashboard})` : null,
    input.links.artifact ? `[raw results (artifact)](${input.links.artifact})` : null,
  ].filter(Boolean);
  const foot = [
    "",
    links.length ? links.join(" · ") : "",
    "",
    "<sub>tokenbench: measured from the stream on a monotonic clock; verdicts from a t prediction interval over the base branch's recent runs (a percentage threshold below 5 runs).</sub>",
  ];
  // Regressions first, then improvements, then the rest; drop rows from the end until it fits.
  tableRows.sort((a, b) => a.priority - b.priority);
  let kept = tableRows.length;
  let withCharts = true;
  for (;;) {
    const dropped = tableRows.length - kept;
    const body = [
      ...head,
      ...tableHead,
      ...tableRows.slice(0, kept).map((r) => r.line),
      ...(dropped > 0
        ? [
            ``,
            `_${dropped} more rows left out to stay under GitHub's comment limit; the dashboard and artifact have everything._`,
          ]
        : []),
      ...(withCharts && charts.length
        ? ["", "<details><summary>charts</summary>", "", ...charts, "", "</details>"]
        : []),
      ...foot,
    ].join("\n");
    if (body.length <= limit) return body;
    if (withCharts && charts.length) {
      withCharts = false;
      continue;
    }
    // Never cut inside the marker or a row: with no rows left, say so in a line that fits.
    if (kept === 0)
      return [
        marker,
        "### tokenbench",
        "",
        "The comment would not fit GitHub's limit; see the dashboard and the artifact.",
      ].join("\n");
    kept = Math.max(0, kept - Math.max(1, Math.ceil((body.length - limit) / 80)));
  }
}

export interface GitHubApi {
  apiUrl: string;
  token: string;
  repository: string;
  fetchImpl?: typeof fetch;
}

/** Create the comment once, then update it in place (found by its marker). Returns what happened. */
export async function upsertStickyComment(
  gh: GitHubApi,
  prNumber: number,
  marker: string,
  body: string,
): Promise<{ action: "created" | "updated"; id: number; url: string | null }> {
  const f = gh.fetchImpl ?? fetch;
  const headers = {
    authorization: `Bearer ${gh.token}`,
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    "content-type": "application/json",
    "user-agent": "tokenbench-action",
  };
  let existing: { id: number } | null = null;
  for (let page = 1; page <= 20 && existing === null; page++) {
    const res = await f(
      `${gh.apiUrl}/repos/${gh.repository}/issues/${prNumber}/comments?per_page=100&page=${page}`,
      { headers },
    );
    if (!res.ok)
      throw new GitHubError(res.status, `listing comments: HTTP ${res.status} ${await res.text()}`);
    const list = (await res.json()) as { id: number; body?: string }[];
    // The marker opens the comment tokenbench wrote; a marker quoted elsewhere does not count.
    existing = list.find((c) => (c.body ?? "").startsWith(marker)) ?? null;
    if (list.length < 100) break;
  }
  if (existing) {
    const res = await f(`${gh.apiUrl}/repos/${gh.repository}/issues/comments/${existing.id}`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ body }),
    });
    if (!res.ok)
      throw new GitHubError(res.status, `updating comment: HTTP ${res.status} ${await res.text()}`);
    const j = (await res.json()) as { id: number; html_url?: string };
    return { action: "updated", id: j.id, url: j.html_url ?? null };
  }
  const res = await f(`${gh.apiUrl}/repos/${gh.repository}/issues/${prNumber}/comments`, {
    method: "POST",
    headers,
    body: JSON.stringify({ body }),
  });
  if (!res.ok) throw new GitHubError(res.status, `creating comment: HTTP ${res.status} ${await res.text()}`);
  const j = (await res.json()) as { id: number; html_url?: string };
  return { action: "created", id: j.id, url: j.html_url ?? null };
}

export class GitHubError extends TokenbenchError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super("github_api", message);
  }
}
