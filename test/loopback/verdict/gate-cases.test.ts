// The gate's hard cases through `tokenbench compare` as a user runs it (files on disk, the built
// CLI, its exit code), on documents of the CI-noise model: a server that breaks (error rate 0 →
// 25 %, a level where every request failed) fails the gate on one run each side; repeats that
// agree exactly do not make a +1.5 % change "beyond noise"; one slow run in twenty of a history is
// left out, named, and a 10 % regression is still caught.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ResultDocument } from "../../../src/schema/v1.ts";
import type { VerdictRow } from "../../../src/shared/verdict.ts";
import {
  DEFAULT_MODEL,
  historyDocuments,
  NO_CHANGE,
  type NoiseModel,
  rng,
  runDocument,
} from "../../helpers/ci-noise.ts";
import { runCli } from "../../helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "tokenbench-gate-cases-"));
const QUIET: NoiseModel = { ...DEFAULT_MODEL, noisePct: 1, jobShare: 0.5, errorRate: 0 };
let n = 0;
const file = (doc: ResultDocument) => {
  const p = join(dir, `doc-${n++}.json`);
  writeFileSync(p, JSON.stringify(doc));
  return p;
};
type Out = {
  rows: VerdictRow[];
  gate: { status: string; failed: string[] };
  excluded: { run: string; reason: string }[];
  headline: string;
};
async function compare(files: string[], code: number): Promise<Out> {
  const r = await runCli(["compare", ...files, "--format", "json"]);
  expect(r.code, r.stderr).toBe(code);
  return JSON.parse(r.stdout) as Out;
}
const pick = (o: Out, b: string, m: string) => o.rows.find((r) => r.benchmark === b && r.measure === m)!;

describe("the gate's hard cases through tokenbench compare", () => {
  it("error rate 0 → 25 %: +25 points, regressed, exit 1 on one run each side", async () => {
    const r = rng(41);
    const o = await compare(
      [
        file(runDocument(r, QUIET, 0, NO_CHANGE)),
        file(runDocument(r, { ...QUIET, errorRate: 0.25 }, 0, NO_CHANGE)),
      ],
      1,
    );
    expect(pick(o, "closed c=4", "error_rate")).toMatchObject({ verdict: "regressed", delta_pct: null });
    expect(pick(o, "closed c=4", "error_rate").delta_pp!).toBeGreaterThan(15);
    expect(o.headline).toMatch(/^Gate failed: error rate/);
  });

  it("a level where every request failed: its TTFT rows regress, saying why; exit 1", async () => {
    const r = rng(42);
    const head = runDocument(r, QUIET, 0, NO_CHANGE);
    const l = head.levels[1]!;
    Object.assign(l, { ok: 0, errors: l.requests, errors_by_code: { http_500: l.requests } });
    for (const k of ["ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "decode_tok_s"] as const)
      l[k] = { n: 0, mean: null, min: null, max: null, p50: null, p90: null, p95: null, p99: null };
    head.samples = head.samples!.filter((x) => x.level !== l.level);
    const o = await compare([file(runDocument(r, QUIET, 0, NO_CHANGE)), file(head)], 1);
    expect(pick(o, "closed c=4", "ttft_p50_ms")).toMatchObject({
      verdict: "regressed",
      head: null,
      reason: "no value in the head: every request failed",
    });
  });

  it("repeats that agree exactly: a +1.5 % change is not beyond noise (the figure's resolution is the floor)", async () => {
    const r = rng(43);
    const one = runDocument(r, QUIET, 0, NO_CHANGE);
    const scaled = (k: number): ResultDocument => {
      const d = structuredClone(one);
      for (const l of d.levels) for (const q of ["p50", "p95", "p99"] as const) l.ttft_ms[q]! *= k;
      return { ...d, samples: undefined, repeats: [0, 1, 2].map((index) => ({ index, levels: d.levels })) };
    };
    const o = await compare([file(scaled(1)), file(scaled(1.015))], 0);
    const row = pick(o, "closed c=4", "ttft_p50_ms");
    expect(row.method).toBe("repeats-t");
    expect(row.verdict).toBe("unchanged");
    expect(row.interval_pct![1] - row.interval_pct![0]).toBeGreaterThan(2);
  });

  it("one slow run in twenty of a history: left out and named; a 10 % throughput regression still fails the gate", async () => {
    const r = rng(44);
    const hist = historyDocuments(r, QUIET, 20);
    for (const l of hist[7]!.doc.levels) {
      l.output_tok_s *= 0.6;
      for (const k of ["p50", "p95", "p99"] as const) l.ttft_ms[k]! *= 1.6;
    }
    // slow in every request: its samples too (the service checks them against the figures)
    for (const x of hist[7]!.doc.samples ?? [])
      if (x.measure.startsWith("ttft")) x.values = x.values.map((v) => v * 1.6);
    const files = hist.map((h) => file(h.doc));
    const o = await compare([...files, file(runDocument(r, QUIET, 0, { ttft: 0, tput: 0.1 }))], 1);
    expect(o.excluded).toContainEqual({ run: files[7], reason: expect.stringMatching(/^an outlier run/) });
    expect(pick(o, "all levels", "output_tok_s").verdict).toBe("regressed");
    expect(o.gate.status).toBe("failed");
  });
});
