import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { MEASURES } from "../../../src/shared/measures.ts";
import { judge, stddev, tCdf, tQuantile } from "../../../src/shared/statistics.ts";
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

describe("verdicts", () => {
  const base = [100, 102, 98, 101, 99, 100];
  it("inside the prediction interval is unchanged; outside is a change, by direction", () => {
    expect(judge(base, 101.5, "higher").verdict).toBe("unchanged");
    expect(judge(base, 90, "higher").verdict).toBe("regressed");
    expect(judge(base, 90, "lower").verdict).toBe("improved");
    expect(judge(base, 110, "lower").verdict).toBe("regressed");
    const j = judge(base, 90, "higher");
    expect(j.method).toBe("t_prediction_interval");
    // mean 100, s = 1.414, t(0.975, 5) = 2.571, sqrt(1 + 1/6): half width 3.93
    expect(j.interval![0]).toBeCloseTo(100 - 2.5706 * Math.SQRT2 * Math.sqrt(7 / 6), 2);
  });
  it("few points: percentage threshold; none: no_baseline; flat history still tolerates pct", () => {
    expect(judge([100, 100], 94, "higher")).toMatchObject({
      method: "percent_threshold",
      verdict: "regressed",
    });
    expect(judge([100, 100], 96, "higher").verdict).toBe("unchanged");
    expect(judge([], 1, "higher").verdict).toBe("no_baseline");
    expect(judge([50, 50, 50, 50, 50], 51, "lower").verdict).toBe("unchanged");
    expect(judge([50, 50, 50, 50, 50], 60, "lower").verdict).toBe("regressed");
  });
  it("the engine pairs head and baseline by benchmark and measure", () => {
    const run = (pts: { benchmark: string; measure: string; value: number }[]): Evidence => ({
      runs: [pts.map((p) => ({ ...p, level: 1 }))],
      samples: null,
      kind: "run",
    });
    const s = judgeRuns(
      run([
        { benchmark: "closed c=1", measure: "output_tok_s", value: 100 },
        { benchmark: "closed c=2", measure: "ttft_p50_ms", value: 10 },
      ]),
      run([
        { benchmark: "closed c=1", measure: "output_tok_s", value: 50 },
        { benchmark: "closed c=1", measure: "ttft_p50_ms", value: 10 },
      ]),
    );
    expect(s.rows.map((r) => r.verdict)).toEqual(["regressed", "no_baseline"]);
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
