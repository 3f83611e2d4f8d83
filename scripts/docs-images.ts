// `npm run docs:images`: the README's pictures, made from real runs against the mock. Two sweeps
// (a base, then a head whose server is 15 % slower to first token), the PR comment the Action
// would post for the pair, rendered as GitHub renders Markdown and photographed in headless
// Chromium, and the sweep's own latency-vs-throughput chart. Writes docs/images/*.png.
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { marked } from "marked";
import { chromium } from "playwright-core";
import { renderComment } from "../src/action/comment.ts";
import { readResults } from "../src/core/results/files.ts";
import { compareDocuments } from "../src/core/tools/compare.ts";
import { start } from "../src/mock/index.ts";

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
  const summary = compareDocuments([base], head);
  const md = renderComment({
    doc: head,
    testbed: "mock-2core",
    verdict: { summary, baseName: "the file base.json" },
    baseBranch: "main",
    links: { run: "https://github.com/", dashboard: "https://github.com/", artifact: "https://github.com/" },
  });
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>${CSS}</style></head><body><div class="comment">${await marked.parse(md)}</div></body></html>`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 }, deviceScaleFactor: 1 });
    await page.setContent(html);
    await page.locator(".comment").screenshot({ path: join(OUT, "pr-comment.png") });
  } finally {
    await browser.close();
  }
  copyFileSync(join(tmp, "head-plots", "knee.png"), join(OUT, "latency-throughput.png"));
  console.log(`wrote ${join(OUT, "pr-comment.png")} and ${join(OUT, "latency-throughput.png")}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
