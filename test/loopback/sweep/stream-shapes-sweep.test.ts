// Reasoning, tool calls and the Responses API through a whole sweep from the CLI: the level
// figures, the table, the CSV, the document (schema v1) and compare all know the new measures.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-shapes-"));
const QUIET = ["--warmup", "1", "--metrics-interval-ms", "0", "--max-tokens", "24", "--requests", "8"];
let reasoning: MockProcess;
let plain: MockProcess;
beforeAll(async () => {
  [reasoning, plain] = await Promise.all([
    startMock({ reasoningTokens: 10, ttftMs: 20, itlMs: 4 }),
    startMock({ ttftMs: 20, itlMs: 4 }),
  ]);
});
afterAll(() => Promise.all([reasoning?.close(), plain?.close()]));

async function sweep(name: string, url: string, args: string[]) {
  const out = join(dir, `${name}.json`);
  const r = await runCli(["sweep", "--base-url", url, ...QUIET, ...args, "--out", out], {
    timeoutMs: 60_000,
  });
  return { ...r, out, doc: r.code === 0 ? parseResultDocument(JSON.parse(readFileSync(out, "utf8"))) : null };
}

describe("a sweep of a reasoning model", () => {
  let doc: ResultDocument;
  let stdout: string;
  let mockLateMs: number;
  beforeAll(async () => {
    const r = await sweep("reasoning", reasoning.url, ["--levels", "1,2", "--slo-ttfat-ms", "5000"]);
    expect(r.code, r.stderr).toBe(0);
    doc = r.doc!;
    stdout = r.stdout;
    // the mock's own record: how late it sent any event of this sweep
    mockLateMs = (await reasoning.stats()).lateness.max ?? 0;
  }, 90_000);

  it("each level has TTFAT, reasoning time and tokens, apart from TTFT", () => {
    for (const l of doc.levels) {
      // a steady level's figures are its window's requests; otherwise all 8
      expect(l.ttfat_ms!.n).toBe(l.steady_state!.steady ? l.steady_state!.requests_inside : 8);
      expect(l.reasoning_tokens!.p50).toBe(10);
      expect(l.answer_tokens!.p50).toBe(14);
      // 10 thinking tokens at 4 ms: the answer is sent 40 ms after the first token, less however
      // late the mock sent that first one (it keeps its schedule), and read less however late the
      // client read the first (its own bound), less the 1 ms of its timer clock
      const floor = 40 - mockLateMs - (l.client.lateness_bound_ms ?? 0) - 1;
      const seen = `mock late ${mockLateMs.toFixed(1)} ms, client bound ${l.client.lateness_bound_ms} ms`;
      expect(l.ttfat_ms!.p50! - l.ttft_ms.p50!, seen).toBeGreaterThanOrEqual(floor);
      expect(l.reasoning_ms!.p50!, seen).toBeGreaterThanOrEqual(floor);
      expect(l.slo_pass_pct).toBe(100);
    }
    expect(doc.config!.slo.ttfat_ms).toBe(5000);
    expect(doc.formulas.ttfat_ms).toMatch(/first answer event/);
  });

  it("the table, the CSV and compare show them", () => {
    expect(stdout).toMatch(/\*\*Reasoning and tool calls:\*\*/);
    expect(stdout).toMatch(/\| TTFAT p50 \(ms\) \|/);
    const csv = readFileSync(join(dir, "reasoning.csv"), "utf8").split("\n");
    // cells may be quoted (a timing note holds commas)
    const cells = (line: string) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].map((m) => m[1]!);
    const cols = cells(csv[0]!);
    const row = cells(csv[1]!);
    expect(Number(row[cols.indexOf("reasoning_tokens_p50")])).toBe(10);
    expect(Number(row[cols.indexOf("ttfat_ms_p50")])).toBeGreaterThan(
      Number(row[cols.indexOf("ttft_ms_p50")]),
    );
  });

  it("compare judges TTFAT as a measure of its own", async () => {
    const path = join(dir, "reasoning.json");
    const r = await runCli(["compare", path, path, "--format", "json"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout).rows as {
      measure: string;
      verdict: string;
      level: number | null;
      reason: string | null;
    }[];
    const ttfat = rows.filter((x) => x.measure === "ttfat_p95_ms" && x.level !== null);
    expect(ttfat).toHaveLength(2);
    // judged like any measure: unchanged against itself, or not judged and saying why (a short
    // level: no steady state; a p95 of 8 requests; a client the suite's load made read late)
    for (const x of rows.filter((y) => y.measure.startsWith("ttfat_") && y.level !== null))
      expect(
        x.verdict === "unchanged" ||
          (x.verdict === "not_judged" &&
            /no steady state|needs ≥ \d+ samples|client-bound/.test(x.reason ?? "")),
        JSON.stringify(x),
      ).toBe(true);
  });

  it("a plain model's levels have no reasoning figures", async () => {
    const r = await sweep("plain", plain.url, ["--levels", "1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.doc!.levels[0]!.ttfat_ms).toBeUndefined();
    expect(r.stdout).not.toMatch(/Reasoning and tool calls/);
  });
});

describe("tool calling and the Responses API from the CLI", () => {
  it("--tools sends the definitions, counts the calls and records the file", async () => {
    const file = join(dir, "tools.json");
    writeFileSync(
      file,
      JSON.stringify([{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }]),
    );
    for (const api of ["chat", "responses", "messages"]) {
      const r = await sweep(`tools-${api}`, plain.url, [
        "--levels",
        "1",
        "--api",
        api,
        "--tools",
        file,
        "--tool-choice",
        "lookup",
      ]);
      expect(r.code, r.stderr).toBe(0);
      const l = r.doc!.levels[0]!;
      expect(l.errors).toBe(0);
      expect(l.tool_calls_total).toBe(8);
      expect(l.tt_first_tool_call_ms!.n).toBe(8);
      expect(r.doc!.config!.tools).toMatchObject({ name: "tools.json", count: 1, choice: "lookup" });
    }
  });

  it("a tools file that is not tool definitions is tools_invalid (exit 1), naming the tool and field", async () => {
    const file = join(dir, "bad-tools.json");
    writeFileSync(
      file,
      JSON.stringify([
        { type: "function", function: { name: "ok" } },
        { type: "function", function: {} },
      ]),
    );
    const r = await sweep("bad-tools", plain.url, ["--levels", "1", "--tools", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/tool 1 needs function\.name/);
    const wrong = await sweep("bad-choice", plain.url, [
      "--levels",
      "1",
      "--tools",
      join(dir, "tools.json"),
      "--tool-choice",
      "nope",
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/no tool of that name/);
  });

  it("--api responses and messages with conversations: the history re-sent, or chained by previous_response_id", async () => {
    for (const [api, chain] of [
      ["responses", []],
      ["responses", ["--responses-chain"]],
      // the Messages API re-sends the history too, its answers as assistant turns
      ["messages", []],
    ] as const) {
      const r = await sweep(`${api}-turns${chain.length}`, plain.url, [
        "--levels",
        "2",
        "--api",
        api,
        "--turns",
        "3",
        ...chain,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const l = r.doc!.levels[0]!;
      expect(l.errors).toBe(0);
      // a later turn carries the conversation so far: more prompt tokens, served from the cache
      const [t1, , t3] = l.turns!;
      expect(t3!.prompt_tokens.p50!).toBeGreaterThan(t1!.prompt_tokens.p50! + 24);
      expect(t3!.cached_tokens_pct!).toBeGreaterThan(50);
    }
  });

  it("a server that ignores ignore_eos: short_output counted with a notice, the level not valid and its rows not judged", async () => {
    const early = await startMock({
      ttftMs: 20,
      itlMs: 4,
      faults: [{ kind: "early_stop", rate: 1, every: null }],
    });
    try {
      const r = await sweep("early", early.url, ["--levels", "1"]);
      expect(r.code, r.stderr).toBe(0);
      const l = r.doc!.levels[0]!;
      expect([l.ok, l.short_output]).toEqual([8, 8]);
      expect(r.stderr).toMatch(/8 of 8 answers stopped short of the 24 tokens asked with ignore_eos/);
      expect(l.validity!.status).toBe("invalid");
      expect(l.validity!.reasons).toContainEqual(
        expect.objectContaining({ code: "short_output", figure: 12, bound: 0.9 * 24 }),
      );
      const whole = await sweep("whole", plain.url, ["--levels", "1"]);
      expect(whole.code, whole.stderr).toBe(0);
      // the same workload was asked: the same fingerprint, and the short level's rows not judged
      expect(whole.doc!.workload_fingerprint).toBe(r.doc!.workload_fingerprint);
      const cmp = await runCli(["compare", whole.out, r.out, "--format", "json"]);
      expect(cmp.code, cmp.stderr).toBe(0);
      const rows = JSON.parse(cmp.stdout).rows as {
        measure: string;
        verdict: string;
        reason: string | null;
      }[];
      const ttft = rows.find((x) => x.measure === "ttft_p50_ms")!;
      expect(ttft.verdict).toBe("not_judged");
      expect(ttft.reason).toMatch(/^head /);
    } finally {
      await early.close();
    }
  });

  it("n > 1 is refused before any request (usage error, exit 2)", async () => {
    const r = await sweep("n2", plain.url, ["--levels", "1", "--extra-body", '{"n":2}']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/one answer per stream/);
  });
});
