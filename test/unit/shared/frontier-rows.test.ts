// The curve verdict (shared/frontier-rows.ts through judgeRuns): runs built from a model server
// whose decode slows linearly with its users (ITL = a + b·c), so each level sits at a known speed
// per user and throughput; a history of base jobs with a per-job effect and per-level noise.
import { describe, expect, it } from "vitest";
import { pointsRun, type RunFigures } from "../../../src/shared/evidence.ts";
import { isFrontierRow } from "../../../src/shared/frontier-rows.ts";
import type { Point } from "../../../src/shared/measures.ts";
import { rng } from "../../../src/shared/random.ts";
import { judgeRuns } from "../../../src/shared/verdict.ts";

const LEVELS = [1, 2, 4, 8, 16, 32];

/** A model server's level figures: ITL = a + b·c ms, every user decoding all the time. */
function modelRun(id: string, itl: (c: number) => number, jitter: () => number): RunFigures {
  const job = 1 + 0.01 * jitter(); // the job's own effect, every level alike
  const points: Point[] = LEVELS.flatMap((c) => {
    const tpot = itl(c) * (1 + 0.002 * jitter());
    const tok = ((c * 1000) / tpot) * job * (1 + 0.002 * jitter());
    const benchmark = `closed c=${c}`;
    return [
      { benchmark, measure: "tpot_p50_ms", value: tpot, level: c },
      { benchmark, measure: "output_tok_s", value: tok, level: c },
    ];
  });
  return pointsRun(id, points, `2026-01-${String(id.length).padStart(2, "0")}`);
}

const gauss = (r: () => number) => () => {
  const u = Math.max(1e-12, r());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
};

const base = (c: number) => 4 + 2 * c;
/** 10 % less capacity: the base's speed per user at c/0.9 users, so at any speed 0.9 × the users. */
const tenPercentLess = (c: number) => 4 + (2 * c) / 0.9;

function judge(headItl: (c: number) => number, seed = 1) {
  const r = gauss(rng(seed));
  const history = Array.from({ length: 10 }, (_, i) => modelRun(`b${i}`.padEnd(i + 2, "x"), base, r));
  const head = modelRun("head", headItl, r);
  return judgeRuns({ kind: "history", runs: history }, { kind: "run", run: head, samples: null });
}

describe("the curve verdict", () => {
  it("10 % less capacity reads −10 % along the frontier, within its interval, and fails the gate", () => {
    const s = judge(tenPercentLess);
    const mean = s.rows.find((r) => isFrontierRow(r.benchmark) && !r.benchmark.includes(" point "))!;
    expect(mean.benchmark).toMatch(/^frontier \d+–\d+ tok\/s per user$/);
    expect(mean).toMatchObject({ measure: "output_tok_s", level: null, method: "history-t", gated: true });
    expect(mean.delta_pct!).toBeGreaterThan(-11.5);
    expect(mean.delta_pct!).toBeLessThan(-8.5);
    expect(mean.interval_pct![0]).toBeLessThan(-10 + 1.5);
    expect(mean.interval_pct![1]).toBeGreaterThan(-10 - 1.5);
    expect(mean.verdict).toBe("regressed");
    expect(s.gate.status).toBe("failed");
    expect(s.gate.failed).toContain(`${mean.benchmark}\u0000output_tok_s`);
  });

  it("an unchanged server: the curve row fails the gate no more often than the gate's 5 %, in 20 seeded histories", () => {
    let failed = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const s = judge(base, seed);
      const rows = s.rows.filter((r) => isFrontierRow(r.benchmark));
      expect(rows.length).toBeGreaterThanOrEqual(2);
      const mean = rows.find((r) => !r.benchmark.includes(" point "))!;
      // a job's own effect is 1 % (sd): a new job lands within 4 sd of the history
      expect(Math.abs(mean.delta_pct!)).toBeLessThan(4);
      if (mean.verdict === "regressed") failed++;
    }
    expect(failed).toBeLessThanOrEqual(2); // 1 expected at 5 %
  });

  it("faster at low concurrency and slower at high: the worst point is the slow end, the best the fast end, neither gated", () => {
    // decode 20 % faster alone, 15 % slower from 16 users up
    const mixed = (c: number) => base(c) * (c <= 2 ? 0.8 : c >= 16 ? 1.15 : 1);
    const s = judge(mixed);
    const rows = s.rows.filter((r) => isFrontierRow(r.benchmark));
    const worst = rows.find((r) => r.benchmark.endsWith("(worst)"))!;
    const best = rows.find((r) => r.benchmark.endsWith("(best)"))!;
    const speedOf = (b: string) => Number(/point ([\d.]+) tok/.exec(b)![1]);
    expect(speedOf(worst.benchmark)).toBeLessThan(speedOf(best.benchmark)); // slow end: many users
    expect(worst.delta_pct!).toBeLessThan(-5);
    expect(best.delta_pct!).toBeGreaterThan(5);
    expect(worst.gated).toBe(false);
    expect(best.gated).toBe(false);
    expect(worst.verdict).toBe("regressed");
    expect(best.verdict).toBe("improved");
  });

  it("curves that share no span of speeds per user give no frontier rows", () => {
    const r = gauss(rng(3));
    const history = Array.from({ length: 6 }, (_, i) => modelRun(`b${i}`.padEnd(i + 2, "x"), base, r));
    const far = modelRun("head", (c) => 100 * base(c), r); // every speed 100× slower
    const s = judgeRuns({ kind: "history", runs: history }, { kind: "run", run: far, samples: null });
    expect(s.rows.filter((x) => isFrontierRow(x.benchmark))).toEqual([]);
  });

  it("a base with no curve (no TPOT in any run): no frontier rows, and throughput over all levels stays gated", () => {
    const r = gauss(rng(4));
    const history = Array.from({ length: 10 }, (_, i) => {
      const run = modelRun(`b${i}`.padEnd(i + 2, "x"), base, r);
      return { ...run, points: run.points.filter((p) => p.measure !== "tpot_p50_ms") };
    });
    const head = modelRun("head", tenPercentLess, r);
    const s = judgeRuns({ kind: "history", runs: history }, { kind: "run", run: head, samples: null });
    expect(s.rows.filter((x) => isFrontierRow(x.benchmark))).toEqual([]);
    const all = s.rows.find((x) => x.benchmark === "all levels" && x.measure === "output_tok_s")!;
    expect(all).toMatchObject({ gated: true, verdict: "regressed" });
    expect(s.gate.status).toBe("failed");
  });
});
