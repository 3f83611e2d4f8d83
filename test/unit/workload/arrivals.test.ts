import { describe, expect, it } from "vitest";
import { arrivalOffsetsMs, rng } from "../../../src/core/workload/arrivals.ts";

describe("arrival processes", () => {
  it("are deterministic per seed", () => {
    const a = arrivalOffsetsMs({ kind: "poisson", rateRps: 10, burstiness: 1, seed: 7, count: 50 });
    const b = arrivalOffsetsMs({ kind: "poisson", rateRps: 10, burstiness: 1, seed: 7, count: 50 });
    const c = arrivalOffsetsMs({ kind: "poisson", rateRps: 10, burstiness: 1, seed: 8, count: 50 });
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it("constant arrivals are exactly 1000/rate apart, starting at 0", () => {
    expect(arrivalOffsetsMs({ kind: "constant", rateRps: 4, burstiness: 1, seed: 1, count: 4 })).toEqual([
      0, 250, 500, 750,
    ]);
  });

  it("poisson and gamma keep the mean rate; gamma < 1 is burstier", () => {
    const n = 20000;
    const gaps = (kind: "poisson" | "gamma", k: number) => {
      const t = arrivalOffsetsMs({ kind, rateRps: 50, burstiness: k, seed: 3, count: n });
      return t.slice(1).map((x, i) => x - t[i]!);
    };
    const cv = (g: number[]) => {
      const m = g.reduce((s, x) => s + x, 0) / g.length;
      const v = g.reduce((s, x) => s + (x - m) ** 2, 0) / g.length;
      return { m, cv: Math.sqrt(v) / m };
    };
    const p = cv(gaps("poisson", 1));
    const bursty = cv(gaps("gamma", 0.25));
    const smooth = cv(gaps("gamma", 4));
    expect(p.m).toBeGreaterThan(19);
    expect(p.m).toBeLessThan(21);
    expect(p.cv).toBeGreaterThan(0.95);
    expect(p.cv).toBeLessThan(1.05);
    expect(bursty.m).toBeGreaterThan(18.5);
    expect(bursty.m).toBeLessThan(21.5);
    expect(bursty.cv).toBeGreaterThan(1.8); // theory: 1/sqrt(0.25) = 2
    expect(smooth.cv).toBeLessThan(0.6); // theory: 0.5
  });

  it("duration bounds the arrivals", () => {
    const t = arrivalOffsetsMs({ kind: "constant", rateRps: 10, burstiness: 1, seed: 1, durationS: 1 });
    expect(t.length).toBe(10);
    expect(t[9]).toBeCloseTo(900, 9);
  });

  it("rng is uniform-ish in [0,1)", () => {
    const r = rng(1);
    let s = 0;
    for (let i = 0; i < 10000; i++) {
      const x = r();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      s += x;
    }
    expect(s / 10000).toBeCloseTo(0.5, 1);
  });
});
