/**
 * The dashboard: a small client-side app served by the Worker as static assets. Pages:
 * `/` repositories, `/r/{owner}/{repo}` trend charts per measure (testbed, benchmark, branch
 * chosen in the page) with the baseline band compare uses and regressions marked, and
 * `/runs/{id}` (and `/r/{owner}/{repo}/pull/{n}`, a pull request's newest run) the verdict
 * against the base branch first, then the curves, then the tables. Charts use the same Vega-Lite specifications
 * as the CLI (src/shared/charts.ts), rendered here by vega-embed.
 */

import embed from "vega-embed";
import type { ResultDocument } from "../schema/v1.ts";
import type { ChangePointsResponse, CompareResponse, SeriesResponse } from "../shared/api-types.ts";
import { documentSpecs, type Spec } from "../shared/charts.ts";
import { mean, predictionInterval } from "../shared/statistics.ts";
import { gpuTelemetryText } from "../shared/testbed.ts";
import { trendSpec } from "../shared/trend-spec.ts";
import {
  consistencyLine,
  environmentLine,
  evidenceLine,
  gateLine,
  invalidLine,
  methodText,
  othersLine,
  rowCells,
  verdictWord,
} from "../shared/verdict-text.ts";
import { visible } from "../shared/visible.ts";
import { sloGiven } from "../shared/workload.ts";

const TREND_MEASURES = [
  "output_tok_s",
  "ttft_p95_ms",
  "itl_p50_ms",
  "tpot_p50_ms",
  "goodput_req_s",
  "error_rate",
];
/** A run-wide benchmark's own measure (a search's answer, the server's start): its one trend. */
function trendMeasures(benchmark: string): string[] {
  if (benchmark.startsWith("agent capacity ")) return ["agent_sessions"];
  if (benchmark === "search saturation") return ["saturation_rps"];
  if (benchmark === "server startup") return ["startup_s", "startup_first_token_s", "startup_warm_s"];
  return TREND_MEASURES;
}
const BASELINE_N = 10;

const app = document.getElementById("app")!;
/** An attribute value (a link, an option's value): HTML-escaped, otherwise exactly as given. */
const attr = (s: unknown) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
/** Shown text: HTML-escaped, invisible format characters written out (shared/visible.ts). */
const esc = (s: unknown) => attr(visible(String(s ?? "")));
const fmt = (v: unknown, d = 1) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(d) : "–");

/**
 * A service with a READ_TOKEN answers reads only with it. The dashboard asks for it once (or takes
 * it from a `#read-token=...` link, removed from the address bar at once) and keeps it for this
 * browser tab only (sessionStorage), sending it as `Authorization: Bearer`.
 */
const TOKEN_KEY = "tokenbench-read-token";
const fromHash = /^#read-token=(.+)$/.exec(location.hash);
if (fromHash) {
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(fromHash[1]!));
  history.replaceState(null, "", location.pathname + location.search);
}

class NeedsReadToken extends Error {}

async function api<T>(path: string): Promise<T> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const res = await fetch(path, {
    headers: { accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  const body = (await res.json()) as T & { error?: { code: string; message: string } };
  if (res.status === 401 && body.error?.code === "read_token_required") throw new NeedsReadToken();
  if (!res.ok)
    throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`);
  return body;
}

function askForReadToken(): void {
  const had = sessionStorage.getItem(TOKEN_KEY) !== null;
  app.innerHTML = `<h1>Read token needed</h1><p>This results service shows its data only with its read token (the operator's <code>READ_TOKEN</code>). It is kept for this tab only.</p>${had ? '<p class="error">That token was not accepted.</p>' : ""}<form id="read-token-form"><label>Read token <input id="read-token" type="password" autocomplete="off" required></label> <button type="submit">Show</button></form>`;
  document.getElementById("read-token-form")!.addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, (document.getElementById("read-token") as HTMLInputElement).value);
    location.reload();
  });
}

/** An SVG of this service as an object URL (fetched with the read token when there is one). */
async function svgUrl(path: string): Promise<string | null> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const res = await fetch(path, { headers: token ? { authorization: `Bearer ${token}` } : {} }).catch(
    () => null,
  );
  if (!res?.ok) return null;
  return URL.createObjectURL(new Blob([await res.text()], { type: "image/svg+xml" }));
}

async function chart(el: HTMLElement, spec: Spec): Promise<void> {
  await embed(el, spec as never, { renderer: "svg", actions: false });
}

function setTitle(t: string, crumbs: string) {
  document.title = `${visible(t)} · tokenbench`;
  app.innerHTML = `<nav class="crumbs">${crumbs}</nav><h1>${esc(t)}</h1><div id="body"></div>`;
  return document.getElementById("body")!;
}

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
type SeriesResp = SeriesResponse;

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
  const seriesOf = (m: string, b: string) =>
    api<SeriesResp>(
      `/api/v1/repos/${repo}/series?${new URLSearchParams({ benchmark, measure: m, testbed, branch: b, limit: "100" })}`,
    );
  await Promise.all(
    trendMeasures(benchmark).map(async (m) => {
      const div = document.createElement("div");
      div.className = "card trend";
      div.dataset.measure = m;
      grid.appendChild(div);
      const s = await seriesOf(m, branch);
      const label = s.measure.label ?? m;
      if (s.points.length === 0) {
        div.innerHTML = `<h3>${esc(label)}</h3><p class="empty">no data</p>`;
        return;
      }
      // A branch other than the base: its points drawn over the base branch's, the band the base's.
      const onBase = branch === baseBranch;
      const base = onBase ? null : await seriesOf(m, baseBranch);
      // Each point's verdict is the one its run was given when it arrived (the engine's, with the
      // run's own rules): the comment's, the badge's and this chart's are the same.
      const pts = s.points.map((p) => ({
        ...p,
        verdict: p.valid === 0 ? "not_judged" : (p.verdict ?? "none"),
        href: `/runs/${p.run_id}`,
      }));
      const validOf = (xs: typeof s.points) => xs.filter((p) => p.valid !== 0);
      const last = onBase
        ? validOf(s.points)
            .slice(-BASELINE_N - 1, -1)
            .map((p) => p.value)
        : validOf(base!.points)
            .slice(-BASELINE_N)
            .map((p) => p.value);
      const band =
        last.length > 0
          ? (([lo, hi]) => ({ lo, hi, mean: mean(last), runs: last.length, of: baseBranch }))(
              predictionInterval(last),
            )
          : null;
      const cps = await api<ChangePointsResponse>(
        `/api/v1/repos/${repo}/change-points?${new URLSearchParams({ benchmark, measure: m, testbed, branch: baseBranch })}`,
      ).catch(() => null);
      const changes = (cps?.change_points ?? []).map((c) => ({
        created_at: c.created_at,
        label: `${c.delta_pct === null ? "" : `${c.delta_pct > 0 ? "+" : ""}${c.delta_pct.toFixed(1)} % `}from run ${c.run_id}`,
      }));
      div.dataset.changePoints = String(changes.length);
      await chart(
        div,
        trendSpec(label, s.measure.unit, pts, band, {
          ...(base
            ? { base: base.points.map((p) => ({ ...p, verdict: p.verdict ?? "none" })), baseName: baseBranch }
            : {}),
          changes,
        }),
      );
    }),
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

/** The engine's summary as the run and PR pages show it: headline and evidence, then every row. */
function verdictSection(cmp: CompareResponse | null): { summary: string; table: string } {
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

/** `/r/{owner}/{repo}/pull/{n}`: the pull request's newest run, verdict first, and its other runs. */
async function pullPage(repo: string, pr: number): Promise<void> {
  const { runs } = await api<{ runs: { id: string; created_at: string; commit_sha: string | null }[] }>(
    `/api/v1/repos/${repo}/runs?pr=${pr}&limit=20`,
  );
  if (runs.length === 0) {
    setTitle(
      `PR #${pr}`,
      `<a href="/">tokenbench</a> / <a href="/r/${attr(repo)}">${esc(repo)}</a> / PR #${pr}`,
    );
    app.insertAdjacentHTML("beforeend", `<p class="empty">No runs of pull request #${pr} yet.</p>`);
    return;
  }
  await runPage(runs[0]!.id);
  app.insertAdjacentHTML(
    "beforeend",
    `<h2>Runs of PR #${pr}</h2><ul class="pr-runs">${runs.map((r) => `<li><a class="run" href="/runs/${attr(r.id)}">${esc(r.created_at.replace("T", " ").slice(0, 19))}</a> <code>${esc((r.commit_sha ?? "").slice(0, 7))}</code></li>`).join("")}</ul>`,
  );
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
  body.innerHTML = `${meta}${verdict.summary}${notValid ? `<p class="invalid">${esc(notValid)}</p>` : ""}<div class="grid" id="curves"></div>${verdict.table}${table ? `<h2>This run, per level</h2>${table}` : ""}`;
  const grid = document.getElementById("curves")!;
  for (const [name, spec] of Object.entries(documentSpecs(doc, baselineDoc))) {
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
