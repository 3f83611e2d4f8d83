/**
 * The dashboard: a small client-side app served by the Worker as static assets. Pages:
 * `/` repositories, `/r/{owner}/{repo}` trend charts per measure (testbed, benchmark, branch
 * chosen in the page) with the baseline band compare uses and regressions marked, and
 * `/runs/{id}` the per-level table and the curves. Charts use the same Vega-Lite specifications
 * as the CLI (src/shared/charts.ts), rendered here by vega-embed.
 */

import embed from "vega-embed";
import type { ResultDocument } from "../schema/v1.ts";
import type { SeriesResponse } from "../shared/api-types.ts";
import { documentSpecs, type Spec, trendSpec } from "../shared/charts.ts";
import { judge, mean, predictionInterval } from "../shared/statistics.ts";

const TREND_MEASURES = [
  "output_tok_s",
  "ttft_p95_ms",
  "itl_p50_ms",
  "tpot_p50_ms",
  "goodput_req_s",
  "error_rate",
];
const BASELINE_N = 10;

const app = document.getElementById("app")!;
const esc = (s: unknown) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
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

async function chart(el: HTMLElement, spec: Spec): Promise<void> {
  await embed(el, spec as never, { renderer: "svg", actions: false });
}

function setTitle(t: string, crumbs: string) {
  document.title = `${t} · tokenbench`;
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
        `<li><a class="repo" href="/r/${esc(r.name)}">${esc(r.name)}</a> <span class="muted">${r.runs} runs · last ${esc(r.last_run_at ?? "never")}</span></li>`,
    )
    .join("")}</ul>`;
}

interface Catalog {
  testbeds: { name: string; fingerprint: string }[];
  benchmarks: string[];
  branches: string[];
}
type SeriesResp = SeriesResponse;

function select(name: string, options: string[], value: string, labels?: string[]): string {
  return `<label>${esc(name)} <select name="${esc(name)}">${options
    .map(
      (o, i) =>
        `<option value="${esc(o)}"${o === value ? " selected" : ""}>${esc(labels?.[i] ?? o)}</option>`,
    )
    .join("")}</select></label>`;
}

async function repoPage(repo: string): Promise<void> {
  const body = setTitle(repo, `<a href="/">tokenbench</a> / <a href="/r/${esc(repo)}">${esc(repo)}</a>`);
  const cat = await api<Catalog>(`/api/v1/repos/${repo}/catalog`);
  const q = new URLSearchParams(location.search);
  const benchmarks = [...cat.benchmarks].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const testbed = q.get("testbed") ?? cat.testbeds[0]?.fingerprint ?? "";
  const benchmark = q.get("benchmark") ?? benchmarks[0] ?? "";
  const branch = q.get("branch") ?? (cat.branches.includes("main") ? "main" : (cat.branches[0] ?? "main"));
  body.innerHTML = `<form class="pick" method="get">${select(
    "testbed",
    cat.testbeds.map((t) => t.fingerprint),
    testbed,
    cat.testbeds.map((t) => t.name),
  )}${select("benchmark", benchmarks, benchmark)}${select("branch", cat.branches, branch)}<button type="submit">show</button></form>
    <p class="muted">Band: the interval compare uses (Student-t prediction interval over the last ${BASELINE_N} points); ▼ marks a regression against the points before it.</p>
    <div class="grid" id="trends"></div><h2>Recent runs</h2><div id="runs"></div>`;
  for (const sel of body.querySelectorAll("select")) {
    sel.addEventListener("change", () => (sel.form as HTMLFormElement).submit());
  }
  const grid = document.getElementById("trends")!;
  await Promise.all(
    TREND_MEASURES.map(async (m) => {
      const div = document.createElement("div");
      div.className = "card trend";
      div.dataset.measure = m;
      grid.appendChild(div);
      const s = await api<SeriesResp>(
        `/api/v1/repos/${repo}/series?${new URLSearchParams({ benchmark, measure: m, testbed, branch, limit: "100" })}`,
      );
      if (s.points.length === 0) {
        div.innerHTML = `<h3>${esc(m)}</h3><p class="empty">no data</p>`;
        return;
      }
      const pts = s.points.map((p, i) => {
        const before = s.points.slice(Math.max(0, i - BASELINE_N), i).map((x) => x.value);
        return {
          ...p,
          verdict: judge(before, p.value, s.measure.direction).verdict,
          href: `/runs/${p.run_id}`,
        };
      });
      const last = s.points.slice(-BASELINE_N - 1, -1).map((p) => p.value);
      const band =
        last.length > 0 ? (([lo, hi]) => ({ lo, hi, mean: mean(last) }))(predictionInterval(last)) : null;
      await chart(div, trendSpec(m, s.measure.unit, pts, band));
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
          `<tr><td><a class="run" href="/runs/${esc(r.id)}">${esc(r.created_at.replace("T", " ").slice(0, 19))}</a></td><td>${esc(r.branch)}</td><td><code>${esc((r.commit_sha ?? "").slice(0, 7))}</code></td><td>${r.pr_number ?? ""}</td><td>${esc(r.testbed.name)}</td></tr>`,
      )
      .join("")}</tbody></table></div>`;
}

async function runPage(id: string): Promise<void> {
  const r = await api<{
    run: {
      repository: string;
      branch: string | null;
      commit_sha: string | null;
      testbed: { name: string };
      created_at: string;
    };
    document: ResultDocument;
  }>(`/api/v1/runs/${id}`);
  const doc = r.document;
  const repo = r.run.repository;
  const body = setTitle(
    `Run ${id}`,
    `<a href="/">tokenbench</a> / <a href="/r/${esc(repo)}">${esc(repo)}</a> / run ${esc(id)}`,
  );
  const meta = `<p class="muted">${esc(doc.target.model)} · testbed ${esc(r.run.testbed.name)} · branch ${esc(r.run.branch)} · commit <code>${esc((r.run.commit_sha ?? "").slice(0, 7))}</code> · ${esc(r.run.created_at)}</p>`;
  let table = "";
  if (doc.kind === "sweep") {
    table = `<div class="scroll"><table class="levels"><thead><tr><th>level</th><th>req</th><th>err</th><th>out tok/s</th><th>TTFT p50</th><th>TTFT p95</th><th>ITL p50</th><th>ITL p95</th><th>TPOT p50</th><th>SLO pass</th><th>goodput req/s</th><th>admitted / queued</th></tr></thead><tbody>${doc.levels
      .map(
        (l) =>
          `<tr><td>${l.level}</td><td>${l.requests}</td><td>${l.errors}</td><td>${fmt(l.output_tok_s, 0)}</td><td>${fmt(l.ttft_ms.p50)}</td><td>${fmt(l.ttft_ms.p95)}</td><td>${fmt(l.itl_ms.p50, 2)}</td><td>${fmt(l.itl_ms.p95, 2)}</td><td>${fmt(l.tpot_ms.p50, 2)}</td><td>${l.slo_pass_pct === null ? "–" : `${fmt(l.slo_pass_pct, 0)}%`}</td><td>${fmt(l.goodput_req_s, 2)}</td><td>${l.admission?.observable ? `${l.admission.admitted_concurrency_max} / ${l.admission.queued_requests_max}` : "not observable"}</td></tr>`,
      )
      .join("")}</tbody></table></div><p class="muted">Times in ms.</p>`;
  }
  body.innerHTML = `${meta}${table}<div class="grid" id="curves"></div>`;
  const grid = document.getElementById("curves")!;
  for (const [name, spec] of Object.entries(documentSpecs(doc))) {
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
    if (repo) await repoPage(decodeURIComponent(repo[1]!));
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
