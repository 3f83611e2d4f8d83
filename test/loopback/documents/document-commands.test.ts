import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { startMock } from "../../helpers/mock-process.ts";

const tmp = mkdtempSync(join(tmpdir(), "tokenbench-tools-"));

function pngSize(buf: Buffer): { w: number; h: number } {
  expect(buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  expect(buf.subarray(12, 16).toString("latin1")).toBe("IHDR");
  return { w: buf.readUInt32BE(16), h: buf.readUInt32BE(20) };
}

describe("plots", () => {
  it("sweep --plots and report: SVG and PNG files with the data points in them", {
    timeout: 90_000,
  }, async () => {
    const m = await startMock({ ttftMs: 5, itlMs: 2, capacity: 2 });
    const out = join(tmp, "sweep.json");
    const r = await runCli([
      "sweep",
      "--base-url",
      m.url,
      "--levels",
      "1,2,4",
      "--requests",
      "8",
      "--max-tokens",
      "6",
      "--metrics-interval-ms",
      "50",
      "--slo-ttft-ms",
      "500",
      "--out",
      out,
      "--plots",
      "--quiet",
    ]);
    await m.close();
    expect(r.code, r.stderr).toBe(0);
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    const dir = join(tmp, "sweep-plots");
    for (const name of ["throughput", "latency", "knee", "goodput", "metrics-timeline"]) {
      const svg = readFileSync(join(dir, `${name}.svg`), "utf8");
      expect(svg.startsWith("<svg"), name).toBe(true);
      expect(svg.trimEnd().endsWith("</svg>"), name).toBe(true);
      const { w, h } = pngSize(readFileSync(join(dir, `${name}.png`)));
      expect(w).toBeGreaterThan(300);
      expect(h).toBeGreaterThan(150);
    }
    const svg = readFileSync(join(dir, "throughput.svg"), "utf8");
    // one run: no legend of one entry; p50 and p95 told apart by shape, the SLO drawn as a line
    expect(svg).not.toContain("role-legend");
    const latency = readFileSync(join(dir, "latency.svg"), "utf8");
    expect(latency).toContain("p50 solid circles, p95 dashed triangles");
    expect(latency).toContain("role-legend");
    expect(readFileSync(join(dir, "knee.svg"), "utf8")).toContain("TTFT SLO 500 ms in red");
    for (const l of doc.levels) {
      const label = `concurrent users: ${l.level}; output tok/s: `;
      const m2 = new RegExp(`${label}([0-9.]+)`).exec(svg);
      expect(m2, `level ${l.level} point`).not.toBeNull();
      expect(Number(m2![1])).toBeCloseTo(l.output_tok_s, 3);
    }
    // the frontier chart when the run has a frontier (two valid steady levels; its points: the frontier test)
    expect(existsSync(join(dir, "frontier.svg"))).toBe(doc.frontier != null);
    const rep = await runCli(["report", out, "--out-dir", join(tmp, "again"), "--png", "false"]);
    expect(rep.code).toBe(0);
    // what was measured first, then the table
    expect(rep.stdout).toMatch(/^# tokenbench sweep: /);
    expect(rep.stdout).toMatch(/^\| level \|/m);
    expect(existsSync(join(tmp, "again", "knee.svg"))).toBe(true);
    expect(existsSync(join(tmp, "again", "knee.png"))).toBe(false);
  });
});

describe("compare, import, export from the CLI", () => {
  const example = "schema/examples/closed-sweep.json";

  it("exit 0 when nothing regressed, 1 when something did, 2 on usage errors; md and json", async () => {
    const same = await runCli(["compare", example, example]);
    expect(same.code).toBe(0);
    // the headline first: the same words as the PR comment's
    expect(same.stdout.split("\n")[0]).toMatch(
      /^Not gated \(one run each side cannot see run-to-run noise: .*\): no gated row moved beyond its interval; \d+ other rows in the details\.$/,
    );
    const doc = JSON.parse(readFileSync(example, "utf8"));
    for (const l of doc.levels) l.output_tok_s *= 0.5;
    const worse = join(tmp, "worse.json");
    writeFileSync(worse, JSON.stringify(doc));
    // by default (fail-on regression, as in the Action) one file each side is not gated: exit 0
    const r = await runCli(["compare", example, worse, "--format", "json"]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.failed).toBe(false);
    expect(j.counts.regressed).toBeGreaterThan(0);
    expect(j.headline).toMatch(
      /^Not gated \(one run each side.*\): output tok\/s over all levels −50\.0 % regressed/,
    );
    expect(j.gate.status).toBe("not_gated");
    expect((await runCli(["compare", example, worse, "--fail-on", "warning"])).code).toBe(1);
    expect(
      j.rows.find(
        (x: { benchmark: string; measure: string }) =>
          x.benchmark === "closed c=4" && x.measure === "output_tok_s",
      ).verdict,
    ).toBe("regressed");
    expect((await runCli(["compare", example])).code).toBe(2);
    // a file that is not there is the file's fault (exit 1, with the code), a file too many is usage
    const missing = await runCli(["compare", example, join(tmp, "missing.json")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /error \[results_file_invalid\]: .*missing\.json: \(the head file\) does not exist/,
    );
    const two = await runCli(["report", example, example]);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain("report reads one results file, got 2");
    // thresholds and fail-on: output tok/s -50 % under its own -60 % rule is no regression
    const own = [
      "--thresholds",
      "output_tok_s=-60%, total_tok_s=-60%, req_s=-60%, goodput_req_s=-60%, *=t-test",
    ];
    const pass = await runCli([
      "compare",
      example,
      worse,
      ...own,
      "--fail-on",
      "regression",
      "--format",
      "json",
    ]);
    expect(pass.code, pass.stderr).toBe(0);
    expect(JSON.parse(pass.stdout).rules).toBe(
      "output_tok_s=-60%, total_tok_s=-60%, req_s=-60%, goodput_req_s=-60%, *=t-test",
    );
    // a tighter own rule: a regression, but one file each side cannot gate (it cannot see
    // run-to-run noise): exit 0 under fail-on regression, 1 under fail-on warning
    const own10 = ["compare", example, worse, "--thresholds", "output_tok_s=-10%"];
    const gate = await runCli([...own10, "--fail-on", "regression"]);
    expect(gate.code, gate.stdout).toBe(0);
    expect(gate.stdout).toMatch(
      /\| closed c=4 \| output tok\/s \| [0-9.]+ \| [0-9.]+ \| −50\.0 % \| – \| percent \| regressed \(warning\) \|/,
    );
    expect((await runCli([...own10, "--fail-on", "warning"])).code).toBe(1);
    // judged by *: a warning; fail-on never passes whatever regressed
    expect((await runCli(["compare", example, worse, "--fail-on", "never"])).code).toBe(0);
    // unlike workloads: refused (exit 2) naming the fields, unless allowed
    const other = JSON.parse(readFileSync(example, "utf8"));
    other.config.max_tokens = 256;
    other.config.prompt_tokens = 2000;
    other.config.mode = "open";
    const otherPath = join(tmp, "other-workload.json");
    writeFileSync(otherPath, JSON.stringify(other));
    // another workload is no baseline (the same on every surface), its fields named
    const unlike = await runCli(["compare", example, otherPath]);
    expect(unlike.code).toBe(0);
    expect(unlike.stdout.split("\n")[0]).toMatch(
      /^No baseline: the base measured another workload \(mode "closed" vs "open"; /,
    );
    expect(unlike.stderr).toMatch(
      /mode "closed" vs "open"; prompt_tokens \d+ vs 2000; max_tokens \d+ vs 256/,
    );
    const forced = await runCli([
      "compare",
      example,
      otherPath,
      "--allow-different-workloads",
      "--format",
      "json",
    ]);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout).counts.no_baseline).toBeLessThan(JSON.parse(forced.stdout).rows.length);
    const bad = await runCli(["compare", example, worse, "--thresholds", "output_tok_s=+5%"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--thresholds: rule for output_tok_s/);
  });

  it("import vllm and export gab", async () => {
    const out = join(tmp, "imported.json");
    const r = await runCli(["import", "vllm", "test/fixtures/vllm-bench-serve.json", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(parseResultDocument(JSON.parse(readFileSync(out, "utf8"))).levels[0]!.level).toBe(4);
    const e = await runCli(["export", "gab", out, "--out-dir", join(tmp, "gab")]);
    expect(e.code).toBe(0);
    const bigger = JSON.parse(readFileSync(join(tmp, "gab", "customBiggerIsBetter.json"), "utf8"));
    expect(bigger.find((x: { name: string }) => x.name === "closed c=4 output_tok_s")).toBeTruthy();
    const notVllm = await runCli(["import", "vllm", "package.json"]);
    expect(notVllm.code).toBe(1);
    expect(notVllm.stderr).toMatch(
      /error \[import_invalid\]: vllm bench serve \(package\.json\): not a vLLM/,
    );
    // Bencher Metric Format: benchmark -> measure slug -> {value}, the document's own values
    const b = await runCli(["export", "bencher", out]);
    expect(b.code, b.stderr).toBe(0);
    const bmf = JSON.parse(b.stdout);
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(bmf["closed c=4"]["output-tok-s"]).toEqual({ value: doc.levels[0]!.output_tok_s });
    expect(bmf["closed c=4"]["ttft-p95-ms"]).toEqual({ value: doc.levels[0]!.ttft_ms.p95 });
    expect((await runCli(["export", "csv", out])).code).toBe(2);
  });

  it("import vllm: several results and --append-result JSON Lines into one document, a level each", async () => {
    const one = JSON.parse(readFileSync("test/fixtures/vllm-bench-serve.json", "utf8"));
    const appended = join(tmp, "appended.jsonl");
    writeFileSync(
      appended,
      `${JSON.stringify({ ...one, max_concurrency: 16 })}\n${JSON.stringify({ ...one, max_concurrency: 8 })}\n`,
    );
    const out = join(tmp, "many.json");
    const r = await runCli(["import", "vllm", "test/fixtures/vllm-bench-serve.json", appended, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(doc.levels.map((l) => l.level)).toEqual([4, 8, 16]);
    expect(doc.config!.levels).toEqual([4, 8, 16]);
    const twice = await runCli([
      "import",
      "vllm",
      "test/fixtures/vllm-bench-serve.json",
      "test/fixtures/vllm-bench-serve.json",
    ]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/level 4 appears in .*vllm-bench-serve\.json\) and in/);
    const open = join(tmp, "open.json");
    writeFileSync(open, JSON.stringify({ ...one, max_concurrency: null, request_rate: 2 }));
    const mixed = await runCli(["import", "vllm", "test/fixtures/vllm-bench-serve.json", open]);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toMatch(/is open loop, .* is closed loop/);
  });

  it("import and export refuse what would print NaN or Infinity: exit 1, the code, the file and field, nothing written", async () => {
    const one = JSON.parse(readFileSync("test/fixtures/vllm-bench-serve.json", "utf8"));
    const zero = join(tmp, "zero-duration.json");
    writeFileSync(zero, JSON.stringify({ ...one, duration: 0 }));
    const out = join(tmp, "zero.tokenbench.json");
    const r = await runCli(["import", "vllm", zero, "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /error \[import_invalid\]: vllm bench serve \(.*zero-duration\.json\): duration must be a number of seconds above 0, found 0/,
    );
    expect(existsSync(out)).toBe(false);
    const empty = join(tmp, "empty.json");
    writeFileSync(empty, "");
    const e = await runCli(["import", "vllm", empty]);
    expect(e.code).toBe(1);
    expect(e.stderr).toMatch(/empty\.json: the file is empty/);
    // a run stopped before its first level ended
    const stopped = join(tmp, "stopped.json");
    const example = JSON.parse(readFileSync("schema/examples/closed-sweep.json", "utf8"));
    writeFileSync(stopped, JSON.stringify({ ...example, levels: [], requests: [], complete: false }));
    for (const kind of ["gab", "bencher"]) {
      const x = await runCli(["export", kind, stopped, "--out-dir", join(tmp, "stopped-gab")]);
      expect(x.code, x.stderr).toBe(1);
      expect(x.stderr).toMatch(/error \[export_empty\]: .*stopped\.json: levels is empty/);
      expect(x.stdout).not.toMatch(/NaN|Infinity/);
    }
    expect(existsSync(join(tmp, "stopped-gab", "customBiggerIsBetter.json"))).toBe(false);
  });
});

describe("plan", () => {
  it("from runs of one workload: a table of what detecting X % takes; runs of two workloads or one run: exit 2", {
    timeout: 60_000,
  }, async () => {
    const { DEFAULT_MODEL, historyDocuments, rng } = await import("../../helpers/ci-noise.ts");
    const docs = historyDocuments(rng(9), { ...DEFAULT_MODEL, noisePct: 3 }, 6);
    const files = docs.map((d, i) => {
      const f = join(tmp, `plan-${i}.json`);
      writeFileSync(f, JSON.stringify(d.doc));
      return f;
    });
    const r = await runCli(["plan", ...files, "--detect-pct", "8"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^To detect a 8 % change at 80 % power/);
    expect(r.stdout).toMatch(
      /\| TTFT p50 \(ms\) \| over all levels \| yes \| [\d.]+ % \| [\d.]+ % \| ≥ [\d.]+ % \|/,
    );
    const json = await runCli(["plan", ...files, "--format", "json"]);
    const rows = JSON.parse(json.stdout).rows as { measure: string; benchmark: string; runs: number }[];
    expect(rows.every((x) => x.runs === 6)).toBe(true);
    // one run cannot show run-to-run noise; a run of another workload is not history
    const one = await runCli(["plan", files[0]!]);
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(/two or more results files/);
    const other = join(tmp, "plan-other.json");
    writeFileSync(
      other,
      JSON.stringify({ ...docs[0]!.doc, target: { ...docs[0]!.doc.target, model: "other" } }),
    );
    const mixed = await runCli(["plan", files[0]!, other]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/measured another workload .*model "m" vs "other"/);
  });
});
