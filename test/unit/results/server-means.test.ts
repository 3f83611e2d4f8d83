// The server's own mean split of a level from its /metrics histograms: differences between the
// scrapes around the steady window (or the level's first and last), never across a restart.
import { describe, expect, it } from "vitest";
import { levelQueueDelta, serverMeans } from "../../../src/core/results/server-means.ts";
import type { HistogramSnapshot } from "../../../src/core/server/server-histograms.ts";

/** A scrape at `t` after `n` requests, each of which spent q, p, d seconds queued, in prefill, in decode. */
function snap(
  t: number,
  n: number,
  q: number,
  p: number,
  d: number,
  cache?: [number, number],
): HistogramSnapshot {
  return {
    t_ms: t,
    phases: {
      queue: { sum: n * q, count: n },
      prefill: { sum: n * p, count: n },
      decode: { sum: n * d, count: n },
      ttft: { sum: n * (q + p), count: n },
      e2e: { sum: n * (q + p + d), count: n },
    },
    cache: cache ? { queries: cache[0], hits: cache[1] } : null,
  };
}

describe("serverMeans", () => {
  it("the steady window's scrapes: the requests finished in it, their mean phases, the cache's hit share", () => {
    // 10 ramp requests with no queue, then 40 in the window that queued 50 ms each
    const snaps = [
      snap(0, 0, 0, 0, 0, [0, 0]),
      snap(1000, 10, 0, 0.02, 0.1, [2560, 0]),
      { ...snap(2000, 30, 0, 0, 0), t_ms: 2000 },
      snap(3000, 50, 0.04, 0.02, 0.1, [12800, 7680]),
      snap(4000, 52, 0.04, 0.02, 0.1, [13312, 7680]),
    ];
    // requests 10..50: 40 of them, sums from the cumulative figures at 1000 ms and 3000 ms
    snaps[3]!.phases.queue = { sum: 40 * 0.05, count: 50 };
    snaps[3]!.phases.ttft = { sum: 10 * 0.02 + 40 * 0.07, count: 50 };
    const m = serverMeans(snaps, { startMs: 1200, endMs: 2900 })!;
    expect(m.window).toBe("steady");
    expect([m.from_ms, m.to_ms]).toEqual([1000, 3000]);
    expect(m.requests).toBe(40);
    expect(m.queue_ms).toBeCloseTo(50, 9);
    expect(m.prefill_ms).toBeCloseTo(20, 9);
    expect(m.decode_ms).toBeCloseTo(100, 9);
    expect(m.ttft_ms).toBeCloseTo(70, 9);
    expect(m.prefix_cache_hit_pct).toBeCloseTo(75, 9); // 7680 of 10240 tokens looked up
  });

  it("without a steady window: the level's first and last scrape", () => {
    const m = serverMeans([snap(0, 0, 0, 0, 0), snap(500, 8, 0.01, 0.03, 0.2)], null)!;
    expect(m).toMatchObject({
      window: "level",
      from_ms: 0,
      to_ms: 500,
      requests: 8,
      prefix_cache_hit_pct: null,
    });
    expect(m.e2e_ms).toBeCloseTo(240, 9);
  });

  it("nothing where the server exports no histogram, counted nothing between the scrapes, or restarted", () => {
    const bare: HistogramSnapshot = { t_ms: 0, phases: {}, cache: null };
    expect(serverMeans([bare, { ...bare, t_ms: 100 }], null)).toBeUndefined();
    expect(serverMeans([snap(0, 5, 0, 0.01, 0.1), snap(100, 5, 0, 0.01, 0.1)], null)).toBeUndefined();
    expect(serverMeans([snap(0, 50, 0, 0.01, 0.1), snap(100, 3, 0, 0.01, 0.1)], null)).toBeUndefined();
    expect(serverMeans([snap(0, 5, 0, 0.01, 0.1)], null)).toBeUndefined();
  });

  it("a phase the server does not export is null, not zero", () => {
    const a: HistogramSnapshot = {
      t_ms: 0,
      phases: { queue: { sum: 0, count: 0 }, ttft: { sum: 0, count: 0 } },
      cache: null,
    };
    const b: HistogramSnapshot = {
      t_ms: 10,
      phases: { queue: { sum: 0.3, count: 6 }, ttft: { sum: 0.6, count: 6 } },
      cache: null,
    };
    const m = serverMeans([a, b], null)!;
    expect(m).toMatchObject({ requests: 6, prefill_ms: null, decode_ms: null, e2e_ms: null });
    expect(m.queue_ms).toBeCloseTo(50, 9);
  });

  it("the admission's queue mean reads the whole level", () => {
    expect(levelQueueDelta([snap(0, 2, 0.1, 0, 0), snap(9, 6, 0.1, 0, 0)])).toEqual({
      sum: expect.closeTo(0.4, 9),
      count: 4,
    });
    expect(levelQueueDelta([snap(0, 2, 0.1, 0, 0)])).toBeNull();
  });
});
