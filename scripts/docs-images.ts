// `npm run docs:images`: the README's pictures, made from real runs against the mock. Two sweeps
// (a base, then a head whose server is 15 % slower to first token), the PR comment the Action
// would post for the pair, rendered as GitHub renders Markdown and photographed in headless
// Chromium; the dashboard's run page for the same pair (the base uploaded to a local results
// service as a run of main, the head as a run of a PR); and the sweep's own
// latency-vs-throughput chart. Writes docs/images/*.png.
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { marked } from "marked";
import { chromium } from "playwright-core";
import { renderComment } from "../src/action/comment.ts";
import { compareDocuments } from "../src/core/documents/compare.ts";
import { readResults } from "../src/core/results/files.ts";
import { start } from "../src/mock/index.ts";
import { documentSamples } from "../src/shared/samples.ts";
import { startService } from "./local-service.ts";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = join(ROOT, "docs/images");
const tmp = mkdtempSync(join(tmpdir(), "tokenbench-docs-"));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

async function sweep(ttftMs: number, name: string, plots: boolean): Promise<string> {
  const mock = await start({ port: 0, ttftMs, itlMs: 12, capacity: 16 });
  const out = join(tmp, `${name}.json`);
  // (asynchronously: the mock answers from this process's event loop)
  await promisify(execFile)(process.execPath, [
    join(ROOT, "bin/tokenbench.js"),
    "sweep",
    ...["--base-url", mock.url, "--levels", "1,4,16,32", "--requests", "48", "--max-tokens", "32"],
    ...["--slo-ttft-ms", "500", "--slo-tpot-ms", "20", "--quiet", "--out", out],
    ...(plots ? ["--plots"] : []),
  ]);
  await mock.close();
  return out;
}

/** The pair on a local results service: base as a run of main, head as a run of PR 7. */
async function uploadPair(
  basePath: string,
  headPath: string,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const service = await startService();
  const token = await service.apiToken("acme/demo");
  let n = 0;
  let headId = "";
  for (const [path, branch] of [
    [basePath, "main"],
    [headPath, "feature"],
  ] as const) {
    const doc = readResults(path).doc;
    const samples = documentSamples(doc);
    const body = {
      ...doc,
      repository: "acme/demo",
      git: {
        sha: `${++n}`.repeat(40),
        ref: `refs/heads/${branch}`,
        branch,
        base_branch: "main",
        pr_number: branch === "main" ? null : 7,
        workflow_run_id: String(100 + n),
        run_attempt: 1,
      },
      requests: null,
      samples,
    };
    const r = await fetch(`${service.url}/api/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (r.status !== 201) throw new Error(`upload failed: ${r.status} ${await r.text()}`);
    headId = ((await r.json()) as { run: { id: string } }).run.id;
  }
  return { url: `${service.url}/runs/${headId}`, stop: () => service.stop() };
}

const CSS = `body{font:14px/1.5 -apple-system,"Segoe UI","DejaVu Sans",Helvetica,Arial,sans-serif;color:#1f2328;margin:0;padding:16px;background:#fff;width:860px}
.comment{border:1px solid #d1d9e0;border-radius:6px;padding:8px 16px}
h3{font-size:1.25em;margin:12px 0 8px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #d1d9e0;padding:4px 10px}
th{background:#f6f8fa}
tr:nth-child(2n) td{background:#f6f8fa}
code{background:#eff1f3;border-radius:4px;padding:1px 4px;font-size:12px}
sub{color:#59636e}
summary{cursor:pointer;margin:6px 0}`;

try {
  mkdirSync(OUT, { recursive: true });
  const basePath = await sweep(60, "base", false);
  const headPath = await sweep(69, "head", true);
  const base = readResults(basePath).doc;
  const head = readResults(headPath).doc;
  const summary = compareDocuments([{ id: "base.json", doc: base }], { id: "head.json", doc: head });
  const md = renderComment({
    doc: head,
    testbed: "mock-2core",
    verdict: { summary, baseName: "the file base.json" },
    baseBranch: "main",
    links: { run: "https://github.com/", dashboard: "https://github.com/", artifact: "https://github.com/" },
  });
  const runPage = await uploadPair(basePath, headPath);
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>${CSS}</style></head><body><div class="comment">${await marked.parse(md)}</div></body></html>`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 }, deviceScaleFactor: 1 });
    await page.setContent(html);
    await page.locator(".comment").screenshot({ path: join(OUT, "pr-comment.png") });
    const dash = await browser.newPage({ viewport: { width: 1100, height: 900 }, deviceScaleFactor: 1 });
    await dash.goto(runPage.url);
    await dash.waitForSelector("body[data-ready='true']", { timeout: 90_000 });
    await dash.waitForSelector(".curve[data-chart='latency'] svg .mark-line path");
    // the top of the page: the verdict, then the first charts
    await dash.screenshot({
      path: join(OUT, "dashboard-run.png"),
      clip: { x: 0, y: 0, width: 1100, height: 900 },
    });
    await runPage.stop();
  } finally {
    await browser.close();
  }
  copyFileSync(join(tmp, "head-plots", "knee.png"), join(OUT, "latency-throughput.png"));
  console.log(
    `wrote ${["pr-comment", "dashboard-run", "latency-throughput"].map((n) => join(OUT, `${n}.png`)).join(", ")}`,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
