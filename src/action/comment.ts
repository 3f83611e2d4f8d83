/**
 * The pull-request comment: one verdict line, the key measures at the levels that matter, the
 * curves per level as a table, everything else folded; kept under GitHub's limit. Sticky: one
 * comment per testbed and benchmark set, found by a hidden marker, updated in place.
 */
import { createHash } from "node:crypto";
import type { ResultDocument } from "../schema/v1.ts";
import { ALL_LEVELS } from "../shared/all-levels.ts";
import { isFrontierRow } from "../shared/frontier-rows.ts";
import { benchmarkName } from "../shared/measures.ts";
import { splitSource, whyLines } from "../shared/row-splits.ts";
import { gpuTelemetryText } from "../shared/testbed.ts";
import { documentEvidence, judgeNothing, type VerdictRow, type VerdictSummary } from "../shared/verdict.ts";
import {
  consistencyLine,
  environmentLine,
  evidenceLine,
  formatValue,
  gateLine,
  headline,
  invalidLevelLines,
  methodText,
  othersLine,
  rowCells,
  rowLabel,
  VERDICT_EMOJI,
  verdictWord,
} from "../shared/verdict-text.ts";
import { visible } from "../shared/visible.ts";
import { during, type GitHubApi, GitHubError, github, repoPath } from "./github.ts";

export const GITHUB_COMMENT_LIMIT = 65_536;
const BUDGET = 60_000; // headroom under the limit

/**
 * The measures shown above the fold per level, where the run has them (the gate's own rows come
 * first): TTFAT only where the runs reasoned (it is TTFT elsewhere), tokens per joule only where
 * GPU telemetry was taken.
 */
export const KEY_MEASURES = [
  "output_tok_s",
  "ttft_p95_ms",
  "ttft_p50_ms",
  "error_rate",
  "ttfat_p95_ms",
  "itl_p50_ms",
  "output_tok_per_j",
];
/** A run's own answers, shown above the fold first where the run has them. */
const RUN_KEY_MEASURES = ["agent_sessions", "saturation_rps", "startup_s", "startup_warm_s"];
/** At most this many rows above the fold. */
export const MAX_VISIBLE_ROWS = 20;

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
 * task list, code span, table cell, HTML tag or comment; invisible format characters written out
 * (shared/visible.ts), so none reorders the text after it.
 */
export function mdText(s: string, max = 80): string {
  const flat = visible(s.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim());
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

export interface CommentInput {
  doc: ResultDocument;
  testbed: string;
  /** The verdict engine's summary and how the base is named, or null when there was none to have. */
  verdict: { summary: VerdictSummary; baseName: string } | null;
  /** Why there is no verdict, when a baseline was asked for and could not be had (the log's words). */
  noVerdict?: string | null;
  baseBranch: string | null;
  /** What the run was judged against when that is no branch's runs ("the file base.json"). */
  baseText?: string | null;
  links: {
    run?: string | null;
    dashboard?: string | null;
    artifact?: string | null;
    frontier?: string | null;
  };
}

/** The verdict in words with its emoji beside it (decoration: the word carries the meaning). */
const verdictCell = (r: VerdictRow) =>
  `${VERDICT_EMOJI[r.verdict]} ${r.decided ? "<b>gate</b>: " : ""}${mdText(verdictWord(r), 400)} <sub>${r.method === "none" ? "" : mdText(methodText(r), 60)}${r.rule !== "t-test" ? ` ${mdText(r.rule, 20)}` : ""}</sub>`;

function tableOf(rows: readonly VerdictRow[], withInterval: boolean): string[] {
  return [
    `| benchmark | measure | baseline | head | Δ |${withInterval ? " interval |" : ""} verdict <sub>method</sub> |`,
    `|---|---|---:|---:|---:|${withInterval ? "---|" : ""}---|`,
    ...rows.map((r) => {
      const [benchmark, ...cells] = rowCells(r, withInterval);
      return `| ${[mdText(benchmark!, 60), ...cells, verdictCell(r)].join(" | ")} |`;
    }),
  ];
}

/**
 * The comment, read in ten seconds: the engine's headline (the terminal's first line, word for
 * word) and what it rests on; a table of the key measures (human names, units) at the levels that
 * matter (the lowest and the highest, and any level where a key measure regressed), at most 15
 * rows; per-level curves as a table; then every row the headline counts, folded. Kept under
 * GitHub's limit by dropping whole rows of the folded part, never the marker or a row in half.
 */
export function renderComment(input: CommentInput, limit = BUDGET): string {
  const { doc, verdict } = input;
  const marker = stickyMarker(input.testbed, benchmarkSet(doc));
  const summary = verdict?.summary ?? null;
  const all = summary?.rows ?? judgeNothing(documentEvidence(doc)).rows;
  const byKey = new Map(all.map((r) => [`${r.benchmark}\u0000${r.measure}`, r]));
  const withInterval = all.some((r) => r.interval_pct !== null || r.interval_pp !== null);
  // Which rows go above the fold: key measures at the first and last level and at regressed levels.
  const levels = [...new Set(all.map((l) => l.level).filter((x): x is number => x !== null))].sort(
    (a, b) => a - b,
  );
  const regressedLevels = new Set(
    all
      .filter((l) => (l.gated || KEY_MEASURES.includes(l.measure)) && l.verdict === "regressed")
      .map((l) => l.level),
  );
  const perLevel = Math.max(
    1,
    KEY_MEASURES.filter((m) => all.some((l) => l.measure === m && l.level !== null)).length,
  );
  // The all-levels rows of the key measures first (a whole curve's change), then the levels.
  const curve = all.filter((l) => l.benchmark === ALL_LEVELS && KEY_MEASURES.includes(l.measure));
  const maxLevels = Math.max(1, Math.floor((MAX_VISIBLE_ROWS - curve.length) / perLevel));
  const chosen = [
    ...levels.filter((lv) => regressedLevels.has(lv)),
    ...[levels[0], levels[levels.length - 1]].filter((lv): lv is number => lv !== undefined),
  ]
    .filter((lv, i, a) => a.indexOf(lv) === i)
    .slice(0, maxLevels)
    .sort((a, b) => a - b);
  const isVisible = (l: VerdictRow) =>
    doc.kind === "profile"
      ? all.indexOf(l) < MAX_VISIBLE_ROWS
      : (l.level === null && RUN_KEY_MEASURES.includes(l.measure)) ||
        isFrontierRow(l.benchmark) ||
        (KEY_MEASURES.includes(l.measure) &&
          (l.benchmark === ALL_LEVELS || (l.level !== null && chosen.includes(l.level))));
  const rank = (l: VerdictRow) =>
    l.level === null && RUN_KEY_MEASURES.includes(l.measure)
      ? -3
      : isFrontierRow(l.benchmark)
        ? -2
        : l.benchmark === ALL_LEVELS
          ? -1
          : (l.level ?? 0);
  const shownRows = all
    .filter(isVisible)
    .sort((a, b) =>
      doc.kind === "profile"
        ? 0
        : rank(a) - rank(b) || KEY_MEASURES.indexOf(a.measure) - KEY_MEASURES.indexOf(b.measure),
    )
    .slice(0, MAX_VISIBLE_ROWS);

  const short = shortSha(doc.git?.sha);
  const sha = short ? `\`${short}\`` : "this run";
  const baseBranch = `<code>${mdText(input.baseBranch ?? "", 60)}</code>`;
  const env = summary ? environmentLine(summary) : null;
  const answers = summary ? consistencyLine(summary) : null;
  const others = summary ? othersLine(summary) : null;
  const verdictLines =
    summary === null
      ? [
          input.noVerdict
            ? `No baseline: ${mdText(input.noVerdict, 600)}`
            : "No baseline: no results service is configured (results-url) and no baseline file was given.",
        ]
      : summary.base_runs === 0 && summary.base_kind !== "ab" && summary.baseline_note === null
        ? [
            // the service says why there is no base (no runs yet, or none with a valid level)
            "headline" in summary &&
            typeof summary.headline === "string" &&
            summary.headline.startsWith("No ")
              ? mdText(summary.headline, 400)
              : `No runs of ${baseBranch} on this testbed yet: nothing to compare against.`,
          ]
        : [
            ...(env ? [`**${mdText(env, 500)}** Every row below is judged across it.`, ""] : []),
            `**${mdText(headline(summary), 1000)}**`,
            "",
            ...(answers
              ? [
                  `${summary.consistency!.differ > 0 ? "⚠️ **" : ""}${mdText(answers, 600)}${summary.consistency!.differ > 0 ? "**" : ""}`,
                  "",
                ]
              : []),
            `<sub>${summary.rows.length} measures judged ${mdText(evidenceLine(summary, verdict!.baseName), 400)}. ${mdText(gateLine(summary), 400)}${others ? ` ${mdText(others, 300)}` : ""}</sub>`,
          ];
  const invalid = invalidLevelLines(doc);
  const steadyLine =
    invalid.length > 0
      ? [
          `**Not valid** (rows at these levels are not judged): ${invalid
            .slice(0, 4)
            .map((x) => mdText(x, 200))
            .join("; ")}${invalid.length > 4 ? `; and ${invalid.length - 4} more` : ""}.`,
          "",
        ]
      : [];
  const repeats = doc.repeats && doc.repeats.length > 1 ? `, median of ${doc.repeats.length} repeats` : "";
  const head = [
    marker,
    `### tokenbench: ${mdText(doc.target.model)}`,
    "",
    `Testbed **${mdText(input.testbed)}**, ${mdText(benchmarkSet(doc), 120)}${repeats}, ${sha}, against ${input.baseText ? mdText(input.baseText, 200) : baseBranch}.${doc.gpu_telemetry ? ` GPU telemetry: ${mdText(gpuTelemetryText(doc.gpu_telemetry), 300)}.` : ""}`,
    "",
    ...verdictLines,
    "",
    ...frontierLines(doc, input.links),
    ...steadyLine,
    ...tableOf(shownRows, withInterval),
    ...whyBlock(summary === null ? [] : all),
  ];

  // Curves per level, as a table: a legend needs no image, and a missing value stays missing.
  const curves: string[] = [];
  if (doc.kind === "sweep" && doc.levels.length > 1) {
    const base = (b: string, m: string) => byKey.get(`${b}\u0000${m}`)?.base ?? null;
    curves.push(
      "| level | output tok/s: baseline → head | TTFT p95 (ms): baseline → head |",
      "|---:|---:|---:|",
      ...doc.levels.map((l) => {
        const b = benchmarkName(l);
        return `| ${l.level} | ${formatValue(base(b, "output_tok_s"))} → ${formatValue(l.output_tok_s)} | ${formatValue(base(b, "ttft_p95_ms"))} → ${formatValue(l.ttft_ms.p95)} |`;
      }),
    );
  }
  const links = [
    input.links.run ? `[workflow run](${input.links.run})` : null,
    input.links.dashboard ? `[dashboard](${input.links.dashboard})` : null,
    input.links.artifact ? `[raw results (artifact)](${input.links.artifact})` : null,
  ].filter(Boolean);
  // In HTML, not a code span: a code span shows character references literally.
  const rulesText = `rules <code>${mdText(summary?.rules ?? "*=t-test", 300)}</code>`;
  const foot = [
    "",
    links.length ? links.join(" · ") : "",
    "",
    `<sub>tokenbench: measured from the stream on a monotonic clock. Verdicts by ${rulesText}, one engine for this comment, the CLI, the dashboard and the API. The gate's rows decide the pull request (one-sided, the false-fail rate held across them); every other row is informational. Methods: A/B paired (blocks of one job), history-t (per job of the base branch), repeats-t (within one job), bootstrap (within one run), exact test (per request), percent (nothing measures the noise). A row is "not judged" when its level is not valid on either side.</sub>`,
  ];
  const judged = summary === null ? [] : all;
  let kept = judged.length;
  let withCurves = true;
  for (;;) {
    const dropped = judged.length - kept;
    const details =
      judged.length > 0
        ? [
            "",
            `<details><summary>every measure (${judged.length}: the rows the headline counts)</summary>`,
            "",
            ...tableOf(judged.slice(0, kept), withInterval),
            ...(dropped > 0
              ? [
                  "",
                  `_${dropped} rows left out to stay under GitHub's comment limit; the dashboard and the artifact have them all._`,
                ]
              : []),
            "",
            "</details>",
          ]
        : [];
    const curveBlock =
      withCurves && curves.length
        ? ["", "<details><summary>per level: baseline → head</summary>", "", ...curves, "", "</details>"]
        : [];
    const body = [...head, ...curveBlock, ...details, ...foot].join("\n");
    if (body.length <= limit) return body;
    if (kept > 0) {
      kept = Math.max(0, kept - Math.max(1, Math.ceil((body.length - limit) / 80)));
      continue;
    }
    if (withCurves && curves.length) {
      withCurves = false;
      continue;
    }
    // Never cut inside the marker or a row: with nothing left to drop, say so in a line that fits.
    return [
      marker,
      "### tokenbench",
      "",
      "The comment would not fit GitHub's limit; see the dashboard and the artifact.",
    ].join("\n");
  }
}

/** Create the comment once, then update it in place (found by its marker). Returns what happened. */
export async function upsertStickyComment(
  gh: GitHubApi,
  prNumber: number,
  marker: string,
  body: string,
): Promise<{ action: "created" | "updated"; id: number; url: string | null }> {
  let existing: { id: number } | null = null;
  for (let page = 1; page <= 20 && existing === null; page++) {
    const list = await during(
      "listing comments",
      github<{ id: number; body?: string }[]>(
        gh,
        "GET",
        repoPath(gh, `/issues/${prNumber}/comments?per_page=100&page=${page}`),
      ),
    );
    if (!Array.isArray(list))
      throw new GitHubError(
        200,
        `listing comments: GitHub's API answered JSON that is not a list of comments`,
      );
    // The marker opens the comment tokenbench wrote; a marker quoted elsewhere does not count.
    existing = list.find((c) => (c.body ?? "").startsWith(marker)) ?? null;
    if (list.length < 100) break;
  }
  if (existing) {
    const j = await during(
      "updating comment",
      github<{ id: number; html_url?: string }>(
        gh,
        "PATCH",
        repoPath(gh, `/issues/comments/${existing.id}`),
        {
          body,
        },
      ),
    );
    return { action: "updated", id: j.id, url: j.html_url ?? null };
  }
  const j = await during(
    "creating comment",
    github<{ id: number; html_url?: string }>(gh, "POST", repoPath(gh, `/issues/${prNumber}/comments`), {
      body,
    }),
  );
  return { action: "created", id: j.id, url: j.html_url ?? null };
}

export { GitHubError } from "./github.ts";

/**
 * The frontier's picture: the service's image of this run's curve over the base branch's (GitHub
 * shows an image only by its address), else where the Action kept it (the artifact's
 * frontier.svg). Nothing for a run without a frontier.
 */
function frontierLines(doc: ResultDocument, links: CommentInput["links"]): string[] {
  if (!doc.frontier) return [];
  if (links.frontier) return [`![The frontier: this run over the base branch's runs](${links.frontier})`, ""];
  return links.artifact
    ? [`The frontier chart is frontier.svg in the [raw results](${links.artifact}).`, ""]
    : [];
}

/** Why it moved, under the table: one line per moved row the server's timings or means split. */
function whyBlock(rows: readonly VerdictRow[]): string[] {
  const why = whyLines(rows, rowLabel);
  return why.length === 0
    ? []
    : [
        "",
        `**Why it moved** <sub>${mdText(splitSource(rows), 500)}</sub>`,
        "",
        ...why.map((w) => `- ${mdText(w, 300)}`),
      ];
}
