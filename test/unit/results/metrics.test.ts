import { describe, expect, it } from "vitest";
import {
  aggregateLevel,
  deriveRequest,
  meetsSlo,
  openLoopStats,
  peakInFlight,
} from "../../../src/core/results/metrics.ts";
import { percentile, summarize } from "../../../src/core/results/stats.ts";
import { rec } from "../../helpers/records.ts";

const noSlo = { ttft_ms: null, tpot_ms: null, e2e_ms: null };

describe("percentiles (Hyndman-Fan type 7)", () => {
  it("interpolates between closest ranks", () => {
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(percentile([10, 20, 30, 40, 50], 0.9)).toBeCloseTo(46, 10);
    expect(percentile([15, 20, 35, 40, 50], 0.4)).toBeCloseTo(29, 10);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBeNull();
  });

  it("matches numpy.percentile on 1..100", () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // unsorted input
    expect(percentile(xs, 0.99)).toBeCloseTo(99.01, 10);
    expect(percentile(xs, 0.95)).toBeCloseTo(95.05, 10);
    expect(percentile(xs, 0.5)).toBeCloseTo(50.5, 10);
  });

  it("summarize reports n, mean, min, max and nulls for no samples", () => {
    expect(summarize([3, 1, 2])).toMatchObject({ n: 3, mean: 2, min: 1, max: 3, p50: 2 });
    expect(summarize([])).toEqual({
      n: 0,
      mean: null,
      min: null,
      max: null,
      p50: null,
      p90: null,
      p95: null,
      p99: null,
    });
  });
});

describe("per-request formulas", () => {
  // send at 100; tokens at 150, 160, 175, 190; server says 7 completion tokens (merged chunks)
  const r = rec({ send_ms: 100, events: [150, 160, 175, 190], completion: 7, end_ms: 195 });
  const d = deriveRequest(r);

  it("TTFT = first content event - send", () => expect(d.ttftMs).toBe(50));
  it("E2E = last content event - send; stream E2E to response end", () => {
    expect(d.e2eMs).toBe(90);
    expect(d.e2eStreamMs).toBe(95);
  });
  it("TPOT divides by usage.completion_tokens - 1, never by chunks", () =>
    expect(d.tpotMs).toBeCloseTo(40 / 6, 12));
  it("decode tok/s = (completion_tokens - 1) / (last - first) in seconds", () =>
    expect(d.decodeTokS).toBeCloseTo(6 / 0.04, 9));
  it("tokens per chunk = completion_tokens / content events", () => expect(d.tokensPerChunk).toBe(7 / 4));

  it("open loop: latencies from the intended send and the schedule lag", () => {
    const o = deriveRequest(rec({ send_ms: 100, intended_send_ms: 97, events: [150, 160] }));
    expect(o.scheduleLagMs).toBe(3);
    expect(o.ttftFromIntendedMs).toBe(53);
    expect(o.e2eFromIntendedMs).toBe(63);
  });

  it("tokens of one read (a span no stream decodes in) have no decode rate, which the service would refuse", () => {
    // 8 tokens in 0.034 ms: 206,000 tok/s, a late client's one read of an answer already sent
    const burst = deriveRequest(rec({ send_ms: 0, events: [20, 20.01, 20.034], completion: 8 }));
    expect(burst.decodeTokS).toBeNull();
    expect(burst.tpotMs).toBeCloseTo(0.034 / 7, 9);
    const fast = deriveRequest(rec({ send_ms: 0, events: [20, 20.5, 21], completion: 8 }));
    expect(fast.decodeTokS).toBeCloseTo(7000, 6);
  });

  it("a single-token request has no TPOT or decode rate", () => {
    const one = deriveRequest(rec({ send_ms: 0, events: [20], completion: 1 }));
    expect(one.tpotMs).toBeNull();
    expect(one.decodeTokS).toBeNull();
    expect(one.ttftMs).toBe(20);
  });
});

describe("SLOs", () => {
  const d = deriveRequest(rec({ send_ms: 0, intended_send_ms: -100, events: [50, 60, 70], completion: 3 }));
  it("checks TTFT, TPOT and E2E; open loop counts from the intended send", () => {
    expect(meetsSlo(d, { ttft_ms: 60, tpot_ms: 10, e2e_ms: 70 }, false)).toBe(true);
    expect(meetsSlo(d, { ttft_ms: 49, tpot_ms: null, e2e_ms: null }, false)).toBe(false);
    expect(meetsSlo(d, { ttft_ms: null, tpot_ms: 9.9, e2e_ms: null }, false)).toBe(false);
    expect(meetsSlo(d, { ttft_ms: 60, tpot_ms: null, e2e_ms: null }, true)).toBe(false); // 150 from intended
  });
  it("a failed request never meets an SLO", () => {
    const f = deriveRequest(rec({ send_ms: 0, events: [5], error: { code: "missing_usage", message: "" } }));
    expect(meetsSlo(f, noSlo, false)).toBe(false);
  });
});

describe("level aggregation", () => {
  const records = [
    rec({ id: 1, send_ms: 0, events: [10, 20, 30], end_ms: 31 }),
    rec({ id: 2, send_ms: 0, events: [40, 45, 50], end_ms: 51 }),
    rec({ id: 3, send_ms: 31, events: [41, 51, 61], end_ms: 100 }),
    rec({
      id: 4,
      send_ms: 60,
      events: [70],
      end_ms: 80,
      error: { code: "missing_usage", message: "x" },
      usage: null,
    }),
    rec({ id: 5, send_ms: -50, events: [-40, -30], end_ms: -29, warmup: true }),
  ];
  const a = aggregateLevel({
    level: 2,
    mode: "closed",
    concurrency: 2,
    records,
    warmupRequests: 1,
    slo: { ttft_ms: 25, tpot_ms: null, e2e_ms: null },
  });

  it("excludes warmup, counts errors by code", () => {
    expect(a.requests).toBe(4);
    expect(a.ok).toBe(3);
    expect(a.errors_by_code).toEqual({ missing_usage: 1 });
  });
  it("pools ITL gaps over successful requests", () => {
    expect(a.itl_ms.n).toBe(6);
    expect(a.itl_ms.min).toBe(5);
    expect(a.itl_ms.max).toBe(10);
  });
  it("computes throughput over the level wall time (first send to last end)", () => {
    expect(a.wall_time_s).toBeCloseTo(0.1, 12);
    expect(a.output_tok_s).toBeCloseTo(9 / 0.1, 9);
    expect(a.total_tok_s).toBeCloseTo((9 + 300) / 0.1, 9);
    expect(a.req_s).toBeCloseTo(30, 9);
  });
  it("goodput counts only requests meeting the SLO; pass % is over all measured requests", () => {
    // TTFTs: 10, 40, 10 -> two meet 25 ms; the failed one misses.
    expect(a.goodput_req_s).toBeCloseTo(20, 9);
    expect(a.slo_pass_pct).toBe(50);
  });
  it("tracks peak in-flight and usage/chunk mismatches", () => {
    expect(a.peak_in_flight).toBe(2);
    expect(a.usage_chunk_mismatches).toBe(0);
  });
});

describe("peak in flight", () => {
  it("back-to-back requests do not overlap", () => {
    expect(peakInFlight([rec({ send_ms: 0, end_ms: 10 }), rec({ send_ms: 10, end_ms: 20 })])).toBe(1);
    expect(peakInFlight([rec({ send_ms: 0, end_ms: 10 }), rec({ send_ms: 9, end_ms: 20 })])).toBe(2);
  });
  it("users busy: a request counts from the start of the wait before it (a tool's run), not only in flight", () => {
    // one user calls 0-10, the other waits 5-15 for its tool and calls 15-25
    const rs = [rec({ send_ms: 0, end_ms: 10 }), { ...rec({ send_ms: 15, end_ms: 25 }), tool_wait_ms: 10 }];
    expect(peakInFlight(rs)).toBe(1);
    expect(peakInFlight(rs, (r) => r.tool_wait_ms ?? 0)).toBe(2);
  });
});

describe("open-loop stats", () => {
  it("counts late arrivals beyond 1 ms of lag", () => {
    const s = openLoopStats([
      rec({ send_ms: 10.5, intended_send_ms: 10, events: [20] }),
      rec({ send_ms: 25, intended_send_ms: 20, events: [30] }),
    ]);
    expect(s.lateArrivals).toBe(1);
    expect(s.lag.max).toBe(5);
  });
});
