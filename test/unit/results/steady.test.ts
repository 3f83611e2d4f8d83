import { describe, expect, it } from "vitest";
import { paceRps, steadyWindow } from "../../../src/core/results/steady.ts";
import { rec } from "../../helpers/records.ts";

describe("steadyWindow", () => {
  it("a level as large as the bounds allow (10^6 requests are accepted) is windowed, not a stack overflow", () => {
    // 250,000 back-to-back requests of 20 ms, one user: too many to spread into Math.max
    const records = Array.from({ length: 250_000 }, (_, i) =>
      rec({ id: i, send_ms: i * 20, events: [i * 20 + 10], end_ms: i * 20 + 19 }),
    );
    const w = steadyWindow(records, { mode: "closed", level: 1, minSteadyS: null });
    expect(w.steady, w.reason).toBe(true);
    expect(w.startMs).toBe(0);
    expect(w.endMs).toBe(249_999 * 20 + 19);
    expect(w.inside).toHaveLength(250_000);
  });

  it("a level of 0.5 s has no steady state by default: the 1 s floor applies, whatever half the level is", () => {
    // 4 users, 25 requests each of 20 ms back to back: 0.5 s in all, steady in shape
    const level = (scale: number) =>
      Array.from({ length: 100 }, (_, i) => {
        const t = Math.floor(i / 4) * 20 * scale;
        return rec({ id: i, send_ms: t, events: [t + 10 * scale], end_ms: t + 19 * scale });
      });
    const w = steadyWindow(level(1), { mode: "closed", level: 4, minSteadyS: null });
    expect(w.steady).toBe(false);
    expect(w.minSteadyS).toBe(1);
    expect(w.reason).toMatch(/^the window lasted 0\.\d+ s, under the 1\.00 s asked/);
    // the same shape over 2 s is steady
    const long = level(4);
    expect(steadyWindow(long, { mode: "closed", level: 4, minSteadyS: null }).steady).toBe(true);
  });

  it("an open-loop server far behind: fell behind, from the whole arrival span, even with no window left", () => {
    // 10 req/s offered, one served every 300 ms: the queue (and each E2E) grows all level
    const records = Array.from({ length: 40 }, (_, i) => {
      const send = i * 100;
      const end = 300 * (i + 1);
      return { ...rec({ id: i, send_ms: send, events: [end - 10], end_ms: end }), intended_send_ms: send };
    });
    const w = steadyWindow(records, { mode: "open", level: 10, minSteadyS: null, arrival: "constant" });
    expect(w.fellBehind).toBe(true);
    expect(w.reason).toMatch(
      /^the server fell behind: 13 requests finished in the 3\.90 s they arrived over while 40 arrived, and E2E rose/,
    );
  });

  it("a server far behind that finishes in batches: its pace is batch size over batch period, whatever the phase", () => {
    // 16 slots filled at once, each held 444 ms, offered 64 req/s for 4 s: completions come 16 at a
    // time every 444 ms (36.04 req/s); counting from the first to the last reads (8 x 16 - 1) / 3.1 s
    const period = 444;
    const records = Array.from({ length: 256 }, (_, i) => {
      const send = (i * 1000) / 64;
      const batch = Math.floor(i / 16) + 1;
      const end = batch * period + (i % 16) * 0.2;
      return { ...rec({ id: i, send_ms: send, events: [end - 10], end_ms: end }), intended_send_ms: send };
    });
    const w = steadyWindow(records, { mode: "open", level: 64, minSteadyS: null, arrival: "constant" });
    expect(w.fellBehind).toBe(true);
    expect(w.completedRps! / (16000 / period) - 1).toBeGreaterThan(-0.01);
    expect(w.completedRps! / (16000 / period) - 1).toBeLessThan(0.01);
    // evenly spaced completions: the slope is one over the gap; one instant has no slope
    expect(paceRps([0, 25, 50, 75, 100])).toBeCloseTo(40, 9);
    expect(paceRps([7, 7, 7])).toBeNull();
  });
});
