import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { GITHUB_COMMENT_LIMIT, mdText, renderComment, stickyMarker } from "../../../src/action/comment.ts";
import { runContext } from "../../../src/action/context.ts";
import { ACTION_INPUTS, InputError, readInputs } from "../../../src/action/inputs.ts";
import { uploadResults } from "../../../src/core/documents/publish.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { frontierOf } from "../../../src/shared/frontier.ts";
import { documentPoints } from "../../../src/shared/measures.ts";
import { headline, VERDICT_EMOJI } from "../../../src/shared/verdict-text.ts";
import { pairVerdict } from "../../helpers/verdict.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const example = () =>
  parseResultDocument(JSON.parse(readFileSync(resolve(ROOT, "schema/examples/closed-sweep.json"), "utf8")));

describe("inputs", () => {
  const get = (m: Record<string, string>) => (n: string) => m[n] ?? "";
  it("defaults and parsing", () => {
    const i = readInputs(get({ "base-url": "http://127.0.0.1:8000/", levels: "1, 8", "slo-ttft-ms": "500" }));
    expect(i.baseUrl).toBe("http://127.0.0.1:8000");
    expect(i.sweep.levels).toEqual([1, 8]);
    expect(i.sweep.slo.ttft_ms).toBe(500);
    expect(i.failOnRegression).toBe(false);
    expect(i.sweep.metrics_interval_ms).toBe(500);
  });
  it("errors name the input", () => {
    const bad: [Record<string, string>, string][] = [
      [{}, "base-url"],
      [{ "base-url": "x" }, "base-url"],
      [{ "base-url": "http://a", levels: "0" }, "levels"],
      [{ "base-url": "http://a", mode: "sideways" }, "mode"],
      [{ "base-url": "http://a", "fail-on-regression": "perhaps" }, "fail-on-regression"],
      [{ "base-url": "http://a", "extra-body": "[1]" }, "extra-body"],
    ];
    for (const [m, name] of bad) {
      try {
        readInputs(get(m));
        expect.unreachable(name);
      } catch (err) {
        expect(err).toBeInstanceOf(InputError);
        expect((err as InputError).input).toBe(name);
        expect((err as Error).message).toContain(`input "${name}"`);
      }
    }
  });
  it("action.yml declares exactly the table's inputs, with the table's defaults", () => {
    const yml = parse(readFileSync(resolve(ROOT, "action.yml"), "utf8")) as {
      inputs: Record<string, { default?: string; required?: boolean }>;
    };
    const table = Object.values(ACTION_INPUTS).filter((s) => s.input !== null);
    const read = new Set(table.map((s) => s.input!));
    const declared = new Set(Object.keys(yml.inputs));
    for (const r of read) expect(declared, r).toContain(r);
    for (const d of declared) expect(read, d).toContain(d);
    // the secret inputs say they are masked (src/action/secrets.ts masks every one the table marks)
    const described = yml.inputs as Record<string, { description?: string }>;
    for (const s of table.filter((x) => x.secret))
      expect(described[s.input!]!.description, s.input!).toMatch(/a secret: masked in the log/);
    expect(table.filter((x) => x.secret).map((x) => x.input)).toEqual(
      expect.arrayContaining(["api-token", "read-token", "github-token", "server-api-key"]),
    );
    for (const s of table) {
      // base-url: the CLI defaults to 127.0.0.1:8000; the Action asks for it (readInputs checks).
      const want = s.input === "base-url" ? null : s.defaultText;
      expect(yml.inputs[s.input!]!.default ?? null, s.input!).toBe(want);
    }
  });
});

describe("run context", () => {
  it("uses the PR head sha, not the merge commit", () => {
    const c = runContext(
      {
        GITHUB_REPOSITORY: "a/b",
        GITHUB_SHA: "merge",
        GITHUB_REF: "refs/pull/3/merge",
        GITHUB_EVENT_NAME: "pull_request",
        GITHUB_RUN_ID: "9",
        GITHUB_RUN_ATTEMPT: "2",
      },
      {
        pull_request: {
          number: 3,
          head: { sha: "head", ref: "feat", repo: { full_name: "a/b", fork: false } },
          base: { ref: "main", repo: { full_name: "a/b" } },
        },
      },
    );
    expect(c.git).toMatchObject({
      sha: "head",
      branch: "feat",
      base_branch: "main",
      pr_number: 3,
      workflow_run_id: "9",
      run_attempt: 2,
    });
    expect(c.isFork).toBe(false);
    expect(c.runUrl).toBe("https://github.com/a/b/actions/runs/9");
  });
  it("detects forks and reads workflow_run events", () => {
    expect(
      runContext(
        { GITHUB_REPOSITORY: "a/b" },
        {
          pull_request: {
            number: 1,
            head: { repo: { full_name: "x/b", fork: true } },
            base: { repo: { full_name: "a/b" } },
          },
        },
      ).isFork,
    ).toBe(true);
    const w = runContext(
      { GITHUB_REPOSITORY: "a/b", GITHUB_REF: "refs/heads/main" },
      {
        workflow_run: {
          head_sha: "s",
          head_branch: "feat",
          pull_requests: [{ number: 5, base: { ref: "main" } }],
        },
      },
    );
    expect(w.git).toMatchObject({ sha: "s", branch: "feat", pr_number: 5, base_branch: "main" });
  });
});

describe("PR comment", () => {
  it("renders a table with baseline, head, delta and verdict", () => {
    const doc = example();
    const pts = documentPoints(doc);
    const verdict = pairVerdict(
      pts,
      pts.map((p) => ({ ...p, value: p.value * 1.5 })),
    );
    const md = renderComment({
      doc,
      testbed: "tb",
      verdict,
      baseBranch: "main",
      links: { run: "https://r" },
    });
    expect(md.startsWith(stickyMarker("tb", "closed 1,4"))).toBe(true);
    // one base file, no samples: the percent method, named, the gate's words beside it; no interval column (it has none)
    expect(md).toMatch(
      /\| closed c=4 \| output tok\/s \| [0-9.]+ \| [0-9.]+ \| −33\.3 % \| 🔴 regressed &#40;warning&#41; <sub>percent<\/sub> \|/,
    );
    expect(md).toContain("**Not gated &#40;one run each side cannot see run-to-run noise");
    expect(md).not.toContain("| interval |");
    expect(md).toContain("[workflow run](https://r)");
  });
  it("a reasoning model's runs show TTFAT above the fold, beside TTFT", () => {
    const doc = example();
    const stats = (v: number) => ({ n: 8, mean: v, min: v, max: v, p50: v, p90: v, p95: v, p99: v });
    for (const l of doc.levels) l.ttfat_ms = stats(900);
    const pts = documentPoints(doc);
    const verdict = pairVerdict(
      pts,
      pts.map((p) => ({ ...p, value: p.measure === "ttfat_p95_ms" ? p.value * 1.5 : p.value })),
    );
    const md = renderComment({ doc, testbed: "tb", verdict, baseBranch: "main", links: {} });
    const visible = md.split("<details>")[0]!;
    expect(visible).toMatch(/\| closed c=4 \| TTFAT p95 \(ms\) \| 1350 \| 900\.0 \| −33\.3 % \|/);
    expect(visible).toMatch(/\| closed c=4 \| TTFT p95 \(ms\) \|/);
    // a run without reasoning has no TTFAT rows at all
    const plain = documentPoints(example());
    expect(plain.some((p) => p.measure.startsWith("ttfat"))).toBe(false);
  });
  it("a slower server start (--server-command) is a row above the fold, regressed", () => {
    const at = (readyS: number): ResultDocument => ({
      ...example(),
      startup: { answered_s: 1, ready_s: readyS },
    });
    const verdict = pairVerdict(documentPoints(at(52)), documentPoints(at(40))); // (head, base)
    const md = renderComment({ doc: at(52), testbed: "tb", verdict, baseBranch: "main", links: {} });
    const visible = md.split("<details>")[0]!;
    expect(visible).toMatch(
      /\| server startup \| server startup \| 40\.00 \| 52\.00 \| \+30\.0 % \| 🔴 regressed/,
    );
  });
  it("the curve verdict above the rows: the frontier's change, where it is worst, and its picture", () => {
    const doc = example();
    // a curve: one user decodes at 200 tok/s, four at 100 tok/s each
    doc.levels[0]!.tpot_ms = { ...doc.levels[0]!.tpot_ms, p50: 5 };
    doc.levels[1]!.tpot_ms = { ...doc.levels[1]!.tpot_ms, p50: 10 };
    doc.frontier = frontierOf(doc);
    const base = documentPoints(doc);
    // 10 % less throughput at every level, the same speed per user: 10 % less along the whole curve
    const head = base.map((p) => (p.measure === "output_tok_s" ? { ...p, value: p.value * 0.9 } : p));
    const verdict = pairVerdict(head, base);
    const frontier = verdict.summary.rows.find(
      (r) => r.benchmark.startsWith("frontier ") && !r.benchmark.includes(" point "),
    )!;
    expect(frontier.benchmark).toBe("frontier 100–200 tok/s per user");
    expect(frontier.delta_pct!).toBeCloseTo(-10, 6);
    const worst = verdict.summary.rows.find((r) => r.benchmark.endsWith("(worst)"))!;
    expect(worst.delta_pct!).toBeCloseTo(-10, 6);
    expect(worst.gated).toBe(false);
    const md = renderComment({
      doc,
      testbed: "tb",
      verdict,
      baseBranch: "main",
      links: { frontier: "https://svc/api/v1/runs/abc/frontier.svg", artifact: "https://a" },
    });
    const visible = md.split("<details>")[0]!;
    expect(visible).toContain(
      "![The frontier: this run over the base branch's runs](https://svc/api/v1/runs/abc/frontier.svg)",
    );
    const lines = visible.split("\n").filter((l) => l.startsWith("| "));
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/^\| frontier 100–200 tok\/s per user \| output tok\/s \|.*−10\.0 %/)).toBeGreaterThan(-1);
    // first among the rows: above the all-levels rows and every level's
    expect(at(/^\| frontier 100/)).toBeLessThan(at(/^\| all levels/));
    expect(at(/^\| frontier 100/)).toBeLessThan(at(/^\| closed c=/));
    // without the service's image: where the Action kept it
    const noService = renderComment({
      doc,
      testbed: "tb",
      verdict,
      baseBranch: "main",
      links: { artifact: "https://a" },
    });
    expect(noService).toContain("The frontier chart is frontier.svg in the [raw results](https://a).");
  });

  it("stays under GitHub's 65,536-character limit, regressions first", () => {
    const doc = example();
    const big: ResultDocument = {
      ...doc,
      levels: Array.from({ length: 600 }, (_, i) => ({ ...doc.levels[0]!, level: i + 1 })),
    };
    const pts = documentPoints(big);
    const verdict = pairVerdict(
      pts,
      pts.map((p, i) => ({ ...p, value: i === 5 ? p.value * 2 : p.value })),
    );
    const md = renderComment({ doc: big, testbed: "tb", verdict, baseBranch: "main", links: {} });
    expect(md.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expect(md).toMatch(/rows left out to stay under GitHub's comment limit/);
    const above = md.slice(0, md.indexOf("<details>"));
    expect(above.split("\n").filter((l) => /^\| (closed|all levels)/.test(l)).length).toBeLessThanOrEqual(20);
  });

  it("reads in ten seconds: the engine's headline, key measures at the levels that matter, every row it counts below", () => {
    const doc = example();
    const seven: ResultDocument = {
      ...doc,
      levels: [1, 2, 4, 8, 16, 32, 64].map((level) => ({ ...doc.levels[0]!, level })),
    };
    const pts = documentPoints(seven);
    // the baseline: level 8 had twice the throughput (head regressed there), level 64 has no baseline
    const base = pts
      .filter((p) => p.level !== 64)
      .map((p) => ({ ...p, value: p.level === 8 && p.measure === "output_tok_s" ? p.value * 2 : p.value }));
    const verdict = pairVerdict(pts, base);
    const md = renderComment({ doc: seven, testbed: "tb", verdict, baseBranch: "main", links: {} });
    const above = md.slice(0, md.indexOf("<details>"));
    const shown = above.split("\n").filter((l) => /^\| (closed|all levels)/.test(l));
    // the all-levels rows first, then levels 1 and 64 (first, last) and 8 (regressed), the key measures each
    const keyAt = ["output tok/s", "TTFT p95 (ms)", "TTFT p50 (ms)", "error rate", "ITL p50 (ms)"];
    expect(shown.map((l) => l.split(" | ")[0]!.slice(2))).toEqual([
      ...Array(4).fill("all levels"),
      ...Array(5).fill("closed c=1"),
      ...Array(5).fill("closed c=8"),
      ...Array(5).fill("closed c=64"),
    ]);
    expect(shown.map((l) => l.split(" | ")[1])).toEqual([
      "output tok/s",
      "TTFT p95 (ms)",
      "TTFT p50 (ms)",
      "ITL p50 (ms)",
      ...Array(3).fill(keyAt).flat(),
    ]);
    // the headline is the engine's, word for word (the terminal prints the same line)
    expect(above).toContain(`**${mdText(headline(verdict.summary), 1000)}**`);
    expect(headline(verdict.summary)).toMatch(
      /^Not gated \(one run each side cannot see run-to-run noise: .*\): output tok\/s over all levels −10\.9 % regressed; \d+ other rows in the details\.$/,
    );
    // and its counts are the counts of the rows in the details
    const details = md.slice(md.indexOf("<details><summary>every measure"));
    const all = details
      .slice(0, details.indexOf("</details>"))
      .split("\n")
      .filter((l) => /^\| (closed|all levels)/.test(l));
    expect(all.length).toBe(verdict.summary.rows.length);
    for (const v of ["regressed", "unchanged", "no_baseline"] as const)
      expect(all.filter((l) => l.includes(VERDICT_EMOJI[v])).length).toBe(verdict.summary.counts[v]);
    expect(verdict.summary.counts.regressed).toBe(2); // c=8 and the curve over all levels
    // a missing baseline is shown as missing, never as 0
    expect(shown.find((l) => l.startsWith("| closed c=64 | output tok/s"))).toMatch(
      /\| – \| [0-9.]+ \| – \|/,
    );
    expect(md).toMatch(/\| 64 \| – → [0-9.]+ \|/);
    expect(md).not.toContain("xychart");
  });
});

describe("upload retries", () => {
  it("retries network errors and 5xx with backoff, not 4xx", async () => {
    const doc = example();
    const delays: number[] = [];
    let calls = 0;
    const flaky = (async () => {
      calls++;
      if (calls === 1) throw new TypeError("fetch failed");
      if (calls === 2) return new Response('{"error":{"code":"x","message":"busy"}}', { status: 503 });
      return new Response('{"run":{"id":"abc"},"url":"http://s/runs/abc","created":true}', { status: 201 });
    }) as typeof fetch;
    const ok = await uploadResults(
      "http://s",
      doc,
      "t",
      { attempts: 4, baseDelayMs: 10, sleep: async (ms) => void delays.push(ms) },
      flaky,
    );
    expect(ok).toMatchObject({ ok: true, runId: "abc", attempts: 3, created: true });
    expect(delays).toEqual([10, 20]);
    calls = 0;
    const four = (async () => {
      calls++;
      return new Response('{"error":{"code":"schema_invalid","message":"no"}}', { status: 422 });
    }) as typeof fetch;
    const r = await uploadResults(
      "http://s",
      doc,
      "t",
      { attempts: 4, baseDelayMs: 1, sleep: async () => {} },
      four,
    );
    expect(r.ok).toBe(false);
    expect(calls).toBe(1);
    expect(r.error).toContain("schema_invalid");
  });
});

describe("the docs", () => {
  it("the Action reference and the error table are generated from their sources (npm run docs)", async () => {
    const { staleDocs } = await import("../../../scripts/docs-blocks.ts");
    expect(staleDocs(ROOT)).toEqual([]);
  });

  it("a stale block is found, and each block holds every entry of its source", async () => {
    const { BLOCKS, errorTable, withBlock } = await import("../../../scripts/docs-blocks.ts");
    const { RUN_ERRORS } = await import("../../../src/schema/errors.ts");
    const b = BLOCKS.find((x) => x.file === "docs/cli.md")!;
    const stale = `x\n${b.start}\n| old |\n${b.end}\ny`;
    expect(withBlock(stale, b, ROOT)).not.toBe(stale);
    for (const code of Object.keys(RUN_ERRORS)) expect(errorTable()).toContain(`\`${code}\``);
  });
});

describe("artifact upload", () => {
  it("uploads every results file through the artifact client on a runner, and says so off one", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { uploadArtifact } = await import("../../../src/action/main.ts");
    const dir = mkdtempSync(join(tmpdir(), "tb-art-"));
    for (const f of ["results.json", "results.csv", "server.log"]) writeFileSync(join(dir, f), "x");
    const calls: { name: string; files: string[]; root: string }[] = [];
    const fake = {
      async uploadArtifact(name: string, files: string[], root: string) {
        calls.push({ name, files, root });
        return { id: 77 };
      },
    };
    const env = {
      ACTIONS_RUNTIME_TOKEN: "t",
      GITHUB_REPOSITORY: "a/b",
      GITHUB_RUN_ID: "5",
      GITHUB_SERVER_URL: "https://gh",
    };
    const r = await uploadArtifact("tokenbench-results", dir, env, fake);
    expect(r).toEqual({ id: 77, url: "https://gh/a/b/actions/runs/5/artifacts/77" });
    expect(calls[0]!.name).toBe("tokenbench-results");
    expect(calls[0]!.files.map((f) => f.split("/").pop()).sort()).toEqual([
      "results.csv",
      "results.json",
      "server.log",
    ]);
    const off = await uploadArtifact("x", dir, {}, fake);
    expect(off).toEqual({ id: null, url: null });
    expect(calls).toHaveLength(1);
  });
});
