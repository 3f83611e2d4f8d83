// tokenbench plan on the CI-noise model, whose noise is known: the part of a TTFT median's noise
// that its requests make is recovered from the runs' own requests, the run-to-run rest from the
// history, and what a plan asks for moves the way the arithmetic says it must.
import { describe, expect, it } from "vitest";
import { planRun } from "../../../src/core/documents/plan.ts";
import { DEFAULT_MODEL, historyDocuments, rng } from "../../helpers/ci-noise.ts";

const docs = historyDocuments(rng(3), { ...DEFAULT_MODEL, noisePct: 3, jobShare: 0.5 }, 20).map((d) => d.doc);
const row = (rows: ReturnType<typeof planRun>, benchmark: string, measure: string) =>
  rows.find((r) => r.benchmark === benchmark && r.measure === measure)!;

describe("tokenbench plan", () => {
  const rows = planRun(docs, { detectPct: 10 });
  it("a TTFT median's noise from its requests is the model's: 1.2533 · 0.3 / √120 = 3.43 %", () => {
    const r = row(rows, "closed c=4", "ttft_p50_ms");
    expect(r.requests).toBeGreaterThan(110); // 120 less the rare errors
    expect(r.from_requests_pct!).toBeGreaterThan(3.43 * 0.8);
    expect(r.from_requests_pct!).toBeLessThan(3.43 * 1.2);
    // and the rest is the run-to-run part the model adds (3 % at a level, plus its drift)
    expect(r.noise_pct).toBeGreaterThan(r.from_requests_pct!);
  });
  it("throughput has no per-request samples: all its noise is run-to-run, and it says so", () => {
    const r = row(rows, "all levels", "output_tok_s");
    expect(r.from_requests_pct).toBeNull();
    expect(r.requests_needed).toBeNull();
    expect(r.note).toMatch(/no per-request samples/);
    expect(r.noise_pct).toBeGreaterThan(1);
    expect(r.noise_pct).toBeLessThan(5);
  });
  it("a smaller change needs more of everything; a p99 below its floor says what it needs", () => {
    const small = planRun(docs, { detectPct: 5 });
    for (const m of ["ttft_p50_ms", "ttft_p95_ms"]) {
      const a = row(rows, "all levels", m);
      const b = row(small, "all levels", m);
      expect(b.pairs_needed ?? Number.POSITIVE_INFINITY).toBeGreaterThanOrEqual(a.pairs_needed!);
      expect(b.runs_needed ?? Number.POSITIVE_INFINITY).toBeGreaterThanOrEqual(a.runs_needed ?? 0);
    }
    const p99 = row(rows, "closed c=1", "ttft_p99_ms");
    expect(p99.gated).toBe(false);
    expect(p99.note).toMatch(/p99 needs ≥ 299 requests per level/);
    expect(p99.requests_needed ?? 299).toBeGreaterThanOrEqual(299);
  });
  it("the gated rows are the gate's: --gate names them", () => {
    const only = planRun(docs, { gate: "output_tok_s" });
    expect(row(only, "all levels", "output_tok_s").gated).toBe(true);
    expect(row(only, "all levels", "ttft_p50_ms").gated).toBe(false);
  });
});
