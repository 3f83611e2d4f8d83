/**
 * The dashboard: a small client-side app served by the Worker as static assets. Pages:
 * `/` repositories, `/r/{owner}/{repo}` trend charts per measure (testbed, benchmark, branch
 * chosen in the page) with the baseline band compare uses and regressions marked (trends.ts),
 * `/runs/{id}` the verdict against the base branch first, then the curves, then the tables, and
 * `/r/{owner}/{repo}/pull/{n}` a pull request's own page (pull.ts). Charts use the same
 * Vega-Lite specifications as the CLI (src/shared/charts.ts), rendered here by vega-embed.
 */

import type { ResultDocument } from "../schema/v1.ts";
import type { CompareResponse } from "../shared/api-types.ts";
import { documentSpecs, type Spec } from "../shared/charts.ts";
import { frontierOf } from "../shared/frontier.ts";
import { gpuTelemetryText } from "../shared/testbed.ts";
import { invalidLine } from "../shared/verdict-text.ts";
import { sloGiven } from "../shared/workload.ts";
import {
  api,
  app,
  askForReadToken,
  attr,
  chart,
  esc,
  fmt,
  frontierImage,
  NeedsReadToken,
  setTitle,
  svgUrl,
} from "./common.ts";
import { pullPage } from "./pull.ts";
import { BASELINE_N, drawTrend, trendMeasures } from "./trends.ts";
import { verdictSection } from "./verdict-section.ts";

async function home(): Promise<void> {
  const body = setTitle("Repositories", `<a href="/">tokenbench</a>`);
  const { repositories } = await api<{
    repositories: { name: string; runs: number; last_run_at: string | null }[];
  }>("/api/v1/repos");
  if (repositories.length === 0) {
    body.innerHTML = `<p class="empty">No results yet. Upload one with the GitHub Action or <code>POST /api/v1/runs</code>.</p>`;
    return;
  }
  body.innerHTML = `<ul class="repos">${repositories
    .map(
      (r) =>
        `<li data-repo="${attr(r.name)}"><a class="repo" href="/r/${attr(r.name)}">${esc(r.name)}</a> <span class="badge"></span> <span class="spark"></span> <span class="muted">${r.runs} runs · last ${esc((r.last_run_at ?? "never").replace("T", " ").slice(0, 16))}</span></li>`,
    )
    .join(
      "",
    )}</ul><p class="muted">Each repository's headline measure (output tok/s at its highest level) on main: latest value coloured by its verdict, and its last 31 runs.</p>`;
  // The badge and sparkline SVGs, fetched with the read token when there is one (an <img> cannot send it).
  await Promise.all(
    repositories.map(async (r) => {
      const li = body.querySelector(`li[data-repo="${CSS.escape(r.name)}"]`)!;
      for (const [cls, path, alt] of [
        ["badge", `/badge/${r.name}.svg?branch=main`, "latest"],
        ["spark", `/badge/${r.name}/sparkline.svg?branch=main`, "trend"],
      ] as const) {
        const url = await svgUrl(path);
        if (url) li.querySelector(`.${cls}`)!.innerHTML = `<img src="${url}" alt="${alt}">`;
      }
    }),
  );
}

interface Catalog {
  testbeds: { name: string; fingerprint: string }[];
  benchmarks: string[];
  branches: string[];
}

function select(name: string, options: string[], value: string, labels?: string[]): string {
  return `<label>${esc(name)} <select name="${attr(name)}">${options
    .map(
      (o, i) =>
        `<option value="${attr(o)}"${o === value ? " selected" : ""}>${esc(labels?.[i] ?? o)}</option>`,
    )
    .join("")}</select></label>`;
}

async function repoPage(repo: string): Promise<void> {
  const body = setTitle(repo, `<a href="/">tokenbench</a> / <a href="/r/${attr(repo)}">${esc(repo)}</a>`);
  const cat = await api<Catalog>(`/api/v1/repos/${repo}/catalog`);
  const q = new URLSearchParams(location.search);
  const benchmarks = [...cat.benchmarks].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const testbed = q.get("testbed") ?? cat.testbeds[0]?.fingerprint ?? "";
  // opens on the highest closed-loop level (where a server change shows most), else the first
  const closed = benchmarks.filter((b) => /^closed c=\d+$/.test(b));
  const benchmark = q.get("benchmark") ?? closed[closed.length - 1] ?? benchmarks[0] ?? "";
  const baseBranch = cat.branches.includes("main") ? "main" : (cat.branches[0] ?? "main");
  const branch = q.get("branch") ?? (cat.branches.includes("main") ? "main" : (cat.branches[0] ?? "main"));
  body.innerHTML = `<form class="pick" method="get">${select(
    "testbed",
    cat.testbeds.map((t) => t.fingerprint),
    testbed,
    cat.testbeds.map((t) => t.name),
  )}${select("benchmark", benchmarks, benchmark)}${select("branch", cat.branches, branch)}<button type="submit">show</button></form>
    <p class="muted">Band: where the next run is expected if nothing changed (Student-t prediction interval over up to the last ${BASELINE_N} valid runs of ${esc(branch === baseBranch ? baseBranch : `the base branch, under this branch's points in colour`)}; each chart says how many); ○ a point the band does not hold (${esc(branch === baseBranch ? "the newest run" : "each of this branch's runs")}); ▼ a regression against the runs before it; dashed orange: a change point of the base branch (E-divisive means, t-test).</p>
    <div class="grid" id="trends"></div><h2>Recent runs</h2><div id="runs"></div>`;
  for (const sel of body.querySelectorAll("select")) {
    sel.addEventListener("change", () => (sel.form as HTMLFormElement).submit());
  }
  const grid = document.getElementById("trends")!;
  await Promise.all(
    trendMeasures(benchmark).map((m) =>
      drawTrend(grid, { repo, benchmark, measure: m, testbed, branch, baseBranch }),
    ),
  );
  const { runs } = await api<{
    runs: {
      id: string;
      branch: string | null;
      commit_sha: string | null;
      created_at: string;
      pr_number: number | null;
      testbed: { name: string };
    }[];
  }>(`/api/v1/repos/${repo}/runs?limit=20`);
  document.getElementById("runs")!.innerHTML =
    `<div class="scroll"><table class="runs"><thead><tr><th>time</th><th>branch</th><th>commit</th><th>PR</th><th>testbed</th></tr></thead><tbody>${runs
      .map(
        (r) =>
          `<tr><td><a class="run" href="/runs/${attr(r.id)}">${esc(r.created_at.replace("T", " ").slice(0, 19))}</a></td><td>${esc(r.branch)}</td><td><code>${esc((r.commit_sha ?? "").slice(0, 7))}</code></td><td>${r.pr_number ?? ""}</td><td>${esc(r.testbed.name)}</td></tr>`,
      )
      .join("")}</tbody></table></div>`;
}

async function runPage(id: string): Promise<void> {
  const r = await api<{
    run: {
      repository: string;
      branch: string | null;
      commit_sha: string | null;
      pr_number: number | null;
      workflow_run_id: string | null;
      testbed: { name: string };
      created_at: string;
    };
    document: ResultDocument;
  }>(`/api/v1/runs/${id}`);
  const doc = r.document;
  const repo = r.run.repository;
  const body = setTitle(
    `Run ${id}`,
    `<a href="/">tokenbench</a> / <a href="/r/${attr(repo)}">${esc(repo)}</a> / run ${esc(id)}`,
  );
  const gh = `https://github.com/${repo}`;
  const sha = r.run.commit_sha ?? "";
  const links = [
    /^[0-9a-f]{7,64}$/i.test(sha)
      ? `commit <a class="commit" href="${attr(`${gh}/commit/${sha}`)}"><code>${esc(sha.slice(0, 7))}</code></a>`
      : null,
    r.run.pr_number
      ? `<a class="pr" href="${attr(`${gh}/pull/${r.run.pr_number}`)}">PR #${r.run.pr_number}</a>`
      : null,
    r.run.workflow_run_id && /^\d+$/.test(r.run.workflow_run_id)
      ? `<a class="workflow" href="${attr(`${gh}/actions/runs/${r.run.workflow_run_id}`)}">workflow run</a>`
      : null,
  ].filter(Boolean);
  const gpuMeta = doc.gpu_telemetry ? ` · GPU telemetry: ${esc(gpuTelemetryText(doc.gpu_telemetry))}` : "";
  const meta = `<p class="muted">${esc(doc.target.model)}${gpuMeta} · testbed ${esc(r.run.testbed.name)} · branch ${esc(r.run.branch)} · ${esc(r.run.created_at)}${links.length ? ` · ${links.join(" · ")}` : ""}</p>`;
  // The verdict first (the engine's rows, as the PR comment and the CLI word them), then the
  // charts, then the tables.
  const cmp = await api<CompareResponse>(`/api/v1/repos/${repo}/compare?head=${id}`).catch(() => null);
  const verdict = verdictSection(cmp);
  // The newest baseline run, drawn under this run's curves.
  const baselineDoc =
    cmp && cmp.baseline_runs.length > 0
      ? await api<{ document: ResultDocument }>(`/api/v1/runs/${cmp.baseline_runs[0]}`)
          .then((x) => x.document)
          .catch(() => undefined)
      : undefined;
  let table = "";
  if (doc.kind === "sweep") {
    // SLO pass and goodput only under an SLO; offered vs achieved rate for open loop.
    const slo = sloGiven(doc.config);
    const open = doc.config?.mode === "open";
    table = `<div class="scroll"><table class="levels"><thead><tr><th>level</th>${open ? "<th>offered req/s</th><th>achieved req/s</th>" : ""}<th>req</th><th>err</th><th>out tok/s</th><th>TTFT p50</th><th>TTFT p95</th><th>ITL p50</th><th>ITL p95</th><th>TPOT p50</th>${slo ? "<th>SLO pass</th><th>goodput req/s</th>" : ""}<th>admitted / queued</th></tr></thead><tbody>${doc.levels
      .map(
        (l) =>
          `<tr><td>${l.level}</td>${open ? `<td>${fmt(l.open_loop?.target_rate_rps, 2)}</td><td>${fmt(l.open_loop?.achieved_rate_rps, 2)}</td>` : ""}<td>${l.requests}</td><td>${l.errors}</td><td>${fmt(l.output_tok_s, 0)}</td><td>${fmt(l.ttft_ms.p50)}</td><td>${fmt(l.ttft_ms.p95)}</td><td>${fmt(l.itl_ms.p50, 2)}</td><td>${fmt(l.itl_ms.p95, 2)}</td><td>${fmt(l.tpot_ms.p50, 2)}</td>${slo ? `<td>${l.slo_pass_pct === null ? "–" : `${fmt(l.slo_pass_pct, 0)}%`}</td><td>${fmt(l.goodput_req_s, 2)}</td>` : ""}<td>${l.admission?.observable ? `${l.admission.admitted_concurrency_max} / ${l.admission.queued_requests_max}` : "not observable"}</td></tr>`,
      )
      .join("")}</tbody></table></div><p class="muted">Times in ms.</p>`;
  }
  const notValid = invalidLine(doc);
  // The frontier as the service draws it, over the base branch's recent runs (not only the newest).
  const frontier = frontierOf(doc)
    ? frontierImage(id, "this run", cmp?.base_branch ?? r.run.branch ?? "main")
    : "";
  body.innerHTML = `${meta}${verdict.summary}${notValid ? `<p class="invalid">${esc(notValid)}</p>` : ""}<div class="grid" id="curves"></div>${frontier}${verdict.table}${table ? `<h2>This run, per level</h2>${table}` : ""}`;
  const grid = document.getElementById("curves")!;
  for (const [name, spec] of Object.entries(documentSpecs(doc, baselineDoc))) {
    if (name === "frontier" && frontier) continue;
    const div = document.createElement("div");
    const faceted = "facet" in spec; // small multiples keep their own widths and scroll on a phone
    div.className = faceted ? "card curve wide" : "card curve";
    div.dataset.chart = name;
    grid.appendChild(div);
    await chart(div, faceted ? spec : ({ ...spec, width: "container" } as Spec));
  }
}

async function route(): Promise<void> {
  const p = location.pathname;
  try {
    const repo = /^\/r\/([^/]+\/[^/]+)\/?$/.exec(p);
    const run = /^\/runs\/([0-9a-f]{16})\/?$/.exec(p);
    const pull = /^\/r\/([^/]+\/[^/]+)\/pull\/(\d{1,9})\/?$/.exec(p);
    if (pull) await pullPage(decodeURIComponent(pull[1]!), Number(pull[2]));
    else if (repo) await repoPage(decodeURIComponent(repo[1]!));
    else if (run) await runPage(run[1]!);
    else await home();
    document.body.dataset.ready = "true";
  } catch (err) {
    if (err instanceof NeedsReadToken) {
      askForReadToken();
      document.body.dataset.ready = "token";
      return;
    }
    app.insertAdjacentHTML("beforeend", `<p class="error">${esc((err as Error).message)}</p>`);
    document.body.dataset.ready = "error";
  }
}

void route();
