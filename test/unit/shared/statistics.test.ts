import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { pointsRun } from "../../../src/shared/evidence.ts";
import { MEASURES } from "../../../src/shared/measures.ts";
import { predictionInterval, stddev, tCdf, tQuantile } from "../../../src/shared/statistics.ts";
import { type Evidence, judgeRuns } from "../../../src/shared/verdict.ts";

describe("Student t", () => {
  it("matches the t table", () => {
    expect(tQuantile(0.975, 4)).toBeCloseTo(2.776, 3);
    expect(tQuantile(0.975, 9)).toBeCloseTo(2.262, 3);
    expect(tQuantile(0.95, 30)).toBeCloseTo(1.697, 3);
    expect(tQuantile(0.995, 2)).toBeCloseTo(9.925, 3);
    expect(tCdf(0, 5)).toBeCloseTo(0.5, 12);
  });
  it("sample standard deviation", () => expect(stddev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.138, 3));
});

describe("the prediction band (the dashboard's trend) and the engine's pairing", () => {
  const base = [100, 102, 98, 101, 99, 100];
  it("mean ± t(0.975, n-1) · s · sqrt(1 + 1/n); few points: the percentage; flat: the percentage", () => {
    const [lo, hi] = predictionInterval(base);
    // mean 100, s = 1.414, t(0.975, 5) = 2.571, sqrt(1 + 1/6): half width 3.93
    expect(hi - 100).toBeCloseTo(2.5706 * Math.SQRT2 * Math.sqrt(7 / 6), 2);
    expect(100 - lo).toBeCloseTo(hi - 100, 9);
    expect(predictionInterval([100, 100])).toEqual([95, 105]);
    expect(predictionInterval([50, 50, 50, 50, 50])).toEqual([47.5, 52.5]);
  });
  it("the engine pairs head and baseline by benchmark and measure", () => {
    const run = (id: string, pts: { benchmark: string; measure: string; value: number }[]): Evidence => ({
      kind: "run",
      run: pointsRun(
        id,
        pts.map((p) => ({ ...p, level: 1 })),
      ),
      samples: null,
    });
    const s = judgeRuns(
      run("base", [
        { benchmark: "closed c=1", measure: "output_tok_s", value: 100 },
        { benchmark: "closed c=2", measure: "ttft_p50_ms", value: 10 },
      ]),
      run("head", [
        { benchmark: "closed c=1", measure: "output_tok_s", value: 50 },
        { benchmark: "closed c=1", measure: "ttft_p50_ms", value: 10 },
      ]),
    );
    expect(s.rows.map((r) => [r.benchmark, r.measure, r.verdict])).toEqual([
      ["closed c=1", "output_tok_s", "regressed"],
      ["closed c=1", "ttft_p50_ms", "no_baseline"],
    ]);
    expect(s.counts).toMatchObject({ regressed: 1, no_baseline: 1 });
  });
});

describe("measures", () => {
  it("the migrations seed exactly the shared measure catalog", () => {
    const dir = resolve(import.meta.dirname, "../../../migrations");
    const sql = readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort()
      .map((f) => readFileSync(resolve(dir, f), "utf8"))
      .join("\n");
    const rows = [...sql.matchAll(/\(\d+, '([a-z0-9_]+)', '([^']+)', '(lower|higher)'\)/g)].map((m) => ({
      name: m[1],
      unit: m[2],
      direction: m[3],
    }));
    expect(rows).toEqual(MEASURES.map(({ name, unit, direction }) => ({ name, unit, direction })));
  });
});
