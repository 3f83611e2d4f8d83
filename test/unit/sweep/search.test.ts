// The saturation search's next probe: doubling to a failure, then the bracket closed just under and
// just over the capacity a probe the server fell behind on showed, else bisected; pure.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { saturationHeadline } from "../../../src/core/results/report.ts";
import { bracketOf, nextProbe, type Probe } from "../../../src/core/sweep/search.ts";
import type { LevelResult, ResultDocument } from "../../../src/schema/v1.ts";

const o = { start: 1, targetPassPct: 95, maxProbes: 8 };
/** A server of capacity 36 req/s: probes at or under it pass; over it, it falls behind at 36. */
const probe = (rate: number): Probe =>
  rate <= 36 ? { rate, passPct: 100 } : { rate, passPct: 0, deliveredRps: 36 * 0.99 };

function search(opts = o): Probe[] {
  const probes: Probe[] = [];
  for (let r = nextProbe(probes, opts); r !== null; r = nextProbe(probes, opts)) probes.push(probe(r));
  return probes;
}

describe("the saturation search", () => {
  it("from 1 req/s with 8 probes: a bracket of 3 % at most around a capacity of 36", () => {
    const probes = search();
    expect(probes.map((p) => p.rate).slice(0, 4)).toEqual([1, 4, 16, 64]);
    expect(probes).toHaveLength(6); // then just under and just over 35.6, what 64 showed
    const { lo, hi } = bracketOf(probes, 95);
    expect(probes.length).toBeLessThanOrEqual(8);
    expect((hi! - lo!) / hi!).toBeLessThanOrEqual(0.03);
    expect(lo!).toBeGreaterThanOrEqual(36 * 0.9);
    expect(lo!).toBeLessThanOrEqual(36);
    expect(hi!).toBeGreaterThan(36);
  });

  it("without a rate the server finished (it kept up but missed the SLOs): interpolated once both ends say something, else bisected", () => {
    // 100 % at 32 says nothing of where the share falls: bisection
    const cliff: Probe[] = [
      { rate: 32, passPct: 100 },
      { rate: 64, passPct: 0 },
    ];
    expect(nextProbe(cliff, o)).toBe(48);
    // 98 % at 32 and 50 % at 64: 95 % is crossed a sixteenth of the way, kept a tenth inside
    const falling: Probe[] = [
      { rate: 32, passPct: 98 },
      { rate: 64, passPct: 50 },
    ];
    expect(nextProbe(falling, o)).toBeCloseTo(32 + 0.1 * 32, 6);
    // a share that falls with the rate past 30.3 req/s (95 % at 32.8): within 3 % in 12 probes (one of
    // them the re-measure of a probe within 2 points of the target)
    const share = (rate: number): Probe => ({
      rate,
      passPct: Math.max(0, Math.min(100, 100 - 2 * (rate - 30.3))),
    });
    const ten = { ...o, maxProbes: 12 };
    const probes: Probe[] = [];
    for (let r = nextProbe(probes, ten); r !== null; r = nextProbe(probes, ten)) probes.push(share(r));
    const { lo, hi } = bracketOf(probes, 95);
    expect((hi! - lo!) / hi!).toBeLessThanOrEqual(0.03);
    // (the secant finds a straight line's crossing exactly: an end may sit on it)
    expect(lo!).toBeLessThanOrEqual(32.8 * 1.001);
    expect(hi!).toBeGreaterThanOrEqual(32.8 * 0.999);
  });

  it("an estimate that was too high: its under-probe fails, and the next estimate is that probe's", () => {
    // the failing probe at 64 showed 40 (too high); 39.4 then fails showing 36
    const probes: Probe[] = [
      { rate: 32, passPct: 100 },
      { rate: 64, passPct: 0, deliveredRps: 40 },
    ];
    const under = nextProbe(probes, o)!;
    expect(under).toBeCloseTo(40 * 0.985, 6);
    probes.push({ rate: under, passPct: 0, deliveredRps: 36 });
    expect(nextProbe(probes, o)).toBeCloseTo(36 * 0.985, 6);
  });

  it("an overload too small for a short probe to show: it steps just above the highest pass, not back out", () => {
    // the estimate is right (36), but the probe 1.5 % over it passes (its queue grew by two requests)
    const probes: Probe[] = [
      { rate: 16, passPct: 100 },
      { rate: 64, passPct: 0, deliveredRps: 36 },
      { rate: 36 * 0.985, passPct: 100 },
      { rate: 36 * 1.015, passPct: 100 },
    ];
    expect(nextProbe(probes, o)).toBeCloseTo(36 * 1.015 * 1.03, 6);
  });

  it("a passing probe counts at what it delivered: the bracket's low end and the next step from there", () => {
    const probes: Probe[] = [
      { rate: 16, passPct: 100, passedRps: 16 },
      { rate: 64, passPct: 0, deliveredRps: 36 },
      { rate: 35.46, passPct: 100, passedRps: 35.5 },
      { rate: 36.59, passPct: 100, passedRps: 36.03 },
    ];
    expect(bracketOf(probes, 95)).toEqual({ lo: 36.03, hi: 64 });
    expect(nextProbe(probes, o)).toBeCloseTo(36.03 * 1.03, 6);
  });
});

describe("the saturation headline", () => {
  const sat: NonNullable<ResultDocument["saturation"]> = {
    max_rate_rps: 30.8,
    bracket_rps: [30.8, 31.7],
    pass_pct_at_max: 99,
    goodput_at_max_rps: 30.5,
    target_pass_pct: 95,
    probes: 8,
    max_probes: 12,
    method: "m",
  };
  const golden = JSON.parse(
    readFileSync(resolve(import.meta.dirname, "../../fixtures/golden/closed.json"), "utf8"),
  ).levels[0] as LevelResult;
  const probe = (level: number, reasons: NonNullable<LevelResult["validity"]>["reasons"]): LevelResult => ({
    ...golden,
    level,
    validity: { status: reasons.length > 0 ? "invalid" : "valid", reasons },
  });
  const late = {
    code: "client_bound" as const,
    affects: ["latency"],
    text: "client-bound: read 40 ms late",
    figure: 40,
    bound: 20,
  };

  it("says when the failing probe was read late by its own client (what failed there may be the client's)", () => {
    expect(saturationHeadline(sat, [probe(30.8, []), probe(31.7, [late])])).toMatch(
      /; the probe at 31\.7 req\/s failed while the client was the bottleneck \(the rate may be higher: more --workers, or a quieter runner\)\)$/,
    );
    // a failing probe the client kept up with, or one also invalid for the server's own reason: nothing said
    expect(saturationHeadline(sat, [probe(30.8, []), probe(31.7, [])])).not.toMatch(/bottleneck/);
    const behind = {
      code: "fell_behind" as const,
      affects: ["rate"],
      text: "the server fell behind",
      figure: null,
      bound: null,
    };
    expect(saturationHeadline(sat, [probe(31.7, [late, behind])])).not.toMatch(/bottleneck/);
  });
});
