/** Change points (#12): a 10 % step is found at the right run; noise and one spike are not changes. */
import { describe, expect, it } from "vitest";
import { changePoints, energyDivergence, studentP } from "../../../src/shared/change-points.ts";
import { rng } from "../../../src/shared/random.ts";

/** Normal noise (Box-Muller) around `level` with coefficient of variation `cv`, seeded. */
function noisy(n: number, level: number, cv: number, seed: number): number[] {
  const r = rng(Math.imul(seed, 2654435761) >>> 0); // spread small seeds apart
  return Array.from({ length: n }, () => {
    const z = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
    return level * (1 + cv * z);
  });
}

describe("change points", () => {
  const step = (seed: number) => [...noisy(8, 1000, 0.03, seed), ...noisy(8, 1100, 0.03, seed + 7919)];
  it("the issue's series: a 10 % step after 8 stable points (CV 3 %) is found at point 8", () => {
    // a fixed synthetic series: the same ±3 % wobble before and after a 10 % step
    const wobble = [1000, 1030, 970, 1015, 985, 1025, 975, 1000];
    const cps = changePoints([...wobble, ...wobble.map((x) => x * 1.1)]);
    expect(cps.map((c) => c.index)).toEqual([8]);
    expect(cps[0]!.delta_pct).toBeGreaterThan(5);
    expect(cps[0]!.p_value).toBeLessThan(0.01);
  });
  it("over 300 such series: at point 8 in >= 75 %, within one point in >= 90 %, never a second change in > 2 %", () => {
    let exact = 0;
    let near = 0;
    let extra = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const idx = changePoints(step(seed * 7 + 3)).map((c) => c.index);
      if (idx.length === 1 && idx[0] === 8) exact++;
      if (idx.length === 1 && Math.abs(idx[0]! - 8) <= 1) near++;
      if (idx.length > 1) extra++;
    }
    expect(exact / 300).toBeGreaterThanOrEqual(0.75);
    expect(near / 300).toBeGreaterThanOrEqual(0.9);
    expect(extra / 300).toBeLessThanOrEqual(0.02);
  });
  it("the issue's noise: 20 points (CV 3 %) give none; over 300 such series, a change in <= 2 %", () => {
    expect(changePoints(noisy(20, 1000, 0.03, 1))).toEqual([]);
    let any = 0;
    for (let seed = 1; seed <= 300; seed++)
      if (changePoints(noisy(20, 1000, 0.03, seed * 7 + 3)).length > 0) any++;
    expect(any / 300).toBeLessThanOrEqual(0.02);
  });
  it("one spike is not a change; two steps are two changes", () => {
    const spike = noisy(20, 1000, 0.01, 7);
    spike[10] = 2000;
    expect(changePoints(spike)).toEqual([]);
    const steps = [...noisy(8, 1000, 0.01, 11), ...noisy(8, 900, 0.01, 22), ...noisy(8, 1050, 0.01, 33)];
    expect(changePoints(steps).map((c) => c.index)).toEqual([8, 16]);
  });
  it("the statistics: divergence 0 for identical sides, the t-test's p for a clear shift", () => {
    expect(energyDivergence([1, 2, 3], [1, 2, 3])).toBeCloseTo(0, 12);
    expect(studentP([1, 2, 3, 4], [1, 2, 3, 4])).toBeCloseTo(1, 9);
    expect(studentP([10, 11, 10, 11], [20, 21, 20, 21])).toBeLessThan(1e-5);
  });
});
