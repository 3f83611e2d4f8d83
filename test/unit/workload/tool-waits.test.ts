// `--tool-wait`: the tools' waits between an agent's calls, as the file gives them or drawn from a
// stated distribution, seeded per job and call so a rerun waits the same.
import { describe, expect, it } from "vitest";
import { MAX_TOOL_WAIT_MS, parseToolWait, toolWaitMs } from "../../../src/core/workload/tool-waits.ts";

const draws = (spec: string, n = 20_000) => {
  const w = parseToolWait(spec);
  return Array.from({ length: n }, (_, i) => toolWaitMs(w, 123, 7, 1000 + (i >> 4), i & 15)).sort(
    (a, b) => a - b,
  );
};

describe("--tool-wait", () => {
  it("file keeps the file's wait; fixed is exact", () => {
    expect(toolWaitMs(parseToolWait("file"), 123, 1, 2, 3)).toBe(123);
    expect(draws("fixed:40", 10).every((x) => x === 40)).toBe(true);
  });

  it("exp:MEAN_MS has that mean, lognormal:MEDIAN:SIGMA that median and its spread; seeded", () => {
    const e = draws("exp:1000");
    const mean = e.reduce((a, b) => a + b, 0) / e.length;
    expect(mean / 1000).toBeCloseTo(1, 1); // 20,000 draws: the mean's SE is 0.7 %
    expect(e[Math.floor(e.length / 2)]! / (1000 * Math.LN2)).toBeCloseTo(1, 1);
    const l = draws("lognormal:1000:1");
    expect(l[Math.floor(l.length / 2)]! / 1000).toBeCloseTo(1, 1);
    // one sigma up: the 84th percentile at e times the median
    expect(l[Math.floor(l.length * 0.8413)]! / (1000 * Math.E)).toBeCloseTo(1, 1);
    expect(draws("exp:1000", 50)).toEqual(draws("exp:1000", 50));
    const w = parseToolWait("exp:1000");
    expect(toolWaitMs(w, 0, 1, 5, 2)).not.toBe(toolWaitMs(w, 0, 2, 5, 2)); // the run's seed
    expect(Math.max(...draws("lognormal:3600000:4", 2000))).toBeLessThanOrEqual(MAX_TOOL_WAIT_MS);
  });

  it.each(["", "exp", "exp:0", "fixed:-1", "lognormal:1000", "lognormal:1000:9", "uniform:1:2", "fixed:1:2"])(
    "refuses %j with the forms it takes",
    (s) => {
      expect(() => parseToolWait(s)).toThrow(
        /--tool-wait must be file, fixed:MS, exp:MEAN_MS or lognormal:MEDIAN_MS:SIGMA/,
      );
    },
  );
});
