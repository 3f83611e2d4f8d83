// The gate per pull request, coarsely and fast (bench/verdict.ts prints the full table): on the
// CI-noise model (a job effect shared by everything in a job, per-repeat noise, drift, skewed
// requests, a request's gaps together), unchanged PRs fail the gate near its 5 % and never on one
// run each side; A/B pairs and a history catch a 20 % regression; the max-t's critical value
// falls as the rows move together and is the same for the same family.
import { describe, expect, it } from "vitest";
import { maxTCritical, shrunkCorrelation } from "../../../src/shared/gate-stats.ts";
import { DEFAULT_MODEL, type NoiseModel } from "../../helpers/ci-noise.ts";
import { cellRates } from "../../helpers/gate-trials.ts";

const M: NoiseModel = { ...DEFAULT_MODEL, noisePct: 3, jobShare: 0.5 };
const big = [
  { name: "output tok/s −20 %", change: { ttft: 0, tput: 0.2 } },
  { name: "TTFT +20 %", change: { ttft: 0.2, tput: 0 } },
];

describe("the max-t's critical value", () => {
  it("one row: Student's t; many independent rows: higher; rows that move together: lower; seeded", () => {
    const eye = (k: number) =>
      Array.from({ length: k }, (_, i) => Array.from({ length: k }, (_, j) => (i === j ? 1 : 0)));
    const together = (k: number) =>
      Array.from({ length: k }, (_, i) => Array.from({ length: k }, (_, j) => (i === j ? 1 : 0.9)));
    const one = maxTCritical({ kind: "history", n: 10 }, eye(1), 0.05);
    expect(one).toBeGreaterThan(1.75); // t(0.95, 9) = 1.83, within the simulation's error
    expect(one).toBeLessThan(1.95);
    const indep = maxTCritical({ kind: "history", n: 10 }, eye(9), 0.05);
    const corr = maxTCritical({ kind: "history", n: 10 }, together(9), 0.05);
    expect(indep).toBeGreaterThan(corr + 0.4);
    expect(corr).toBeGreaterThan(one);
    expect(maxTCritical({ kind: "history", n: 10 }, together(9), 0.05)).toBe(corr);
  });
  it("the correlation is shrunk toward none by its own noise", () => {
    const a = [1, 2, 3, 4, 5, 6];
    const { r, lambda } = shrunkCorrelation([a, a.map((x) => 2 * x + 1), [3, 1, 4, 1, 5, 9]]);
    expect(lambda).toBeGreaterThan(0);
    expect(r[0]![1]!).toBeGreaterThan(0.5);
    expect(r[0]![1]!).toBeLessThan(1);
  });
});

describe("per pull request on the CI-noise model (3 % noise, half of it the job's)", () => {
  it("one run each side never fails the gate on noise", () => {
    const c = cellRates(M, "one", { trials: 40, seed: 3, regressions: [], iterations: 100 });
    expect(c.falseFail).toBe(0);
    expect(c.status.not_gated).toBe(40);
  });
  it("a history of 10 jobs: unchanged PRs fail near 5 %, a 20 % regression is caught", {
    timeout: 180_000,
  }, () => {
    const c = cellRates(M, "history 10", { trials: 80, seed: 5, regressions: big });
    expect(c.falseFail / c.trials).toBeLessThanOrEqual(0.12); // 5 % held; 80 trials give about ±5 %
    for (const g of big) expect(c.power[g.name]! / c.trials, g.name).toBeGreaterThanOrEqual(0.85);
  });
  it("A/B with 5 pairs: unchanged PRs fail near 5 %, a 20 % regression is caught", {
    timeout: 180_000,
  }, () => {
    // Each A/B PR is its own job, so its own family: 50 trials (3 critical values each).
    const c = cellRates(M, "ab 5", { trials: 50, seed: 7, regressions: big });
    expect(c.falseFail / c.trials).toBeLessThanOrEqual(0.14); // 5 % held; 50 trials give about ±6 %
    for (const g of big) expect(c.power[g.name]! / c.trials, g.name).toBeGreaterThanOrEqual(0.9);
  });
  it("repeats in two jobs never gate (they cannot see the job effect)", () => {
    const c = cellRates(M, "repeats 3", { trials: 20, seed: 9, regressions: big });
    expect(c.falseFail).toBe(0);
    for (const g of big) expect(c.power[g.name]).toBe(0);
  });
});
