// A level's admission from the server's /metrics timeline and the client's records.
import { describe, expect, it } from "vitest";
import { admissionSummary, meanInFlight } from "../../../src/core/results/admission.ts";
import { rec } from "../../helpers/records.ts";

describe("admission summary", () => {
  const level = {
    level: 4,
    mode: "closed" as const,
    wall_time_s: 1,
    peak_in_flight: 4,
    client: { bottleneck_warning: null },
  } as never;
  const records = [0, 1, 2, 3].map((i) => rec({ id: i, send_ms: 0, events: [100, 500], end_ms: 1000 }));

  it("computes the mean client in-flight count", () => {
    expect(meanInFlight(records)).toBeCloseTo(4, 9);
  });

  const held = {
    records,
    samples: [
      { t_ms: 0, running: 0, waiting: 0, kv_cache_usage_pct: 10 },
      { t_ms: 500, running: 1, waiting: 0, kv_cache_usage_pct: 10 },
    ],
    metricsAvailable: true,
    queueDelta: null,
    limits: { maxRunningRequests: null, cudaGraphMaxBs: null },
  };
  const withClient = (sendQueueP99: number | null, warning: string | null = null) =>
    ({
      ...(level as object),
      client: {
        bottleneck_warning: warning,
        send_queue_ms: sendQueueP99 === null ? undefined : { p99: sendQueueP99 },
      },
    }) as never;

  it("the client holds more in flight than the server reports: the client's queue only when its own send queue held them", () => {
    const window = { startMs: 100, endMs: 900 };
    const a = admissionSummary({ ...held, level: withClient(12), window });
    expect(a.bend_reasons).toContain("client_queueing");
    expect(a.notes.join(" ")).toMatch(/the client's own queue held requests up to 12\.0 ms/);
    expect(a.littles_law!.implied_in_flight).toBeCloseTo(4, 9);
    // the client sent each at once: they waited in front of the server's scheduler
    const b = admissionSummary({ ...held, level: withClient(0.3), window });
    expect(b.bend_reasons).toEqual(["server_queue"]);
    expect(b.notes.join(" ")).toMatch(/queued in front of the server's scheduler/);
    // no steady window: no comparison (an idle start or end would fake one)
    expect(admissionSummary({ ...held, level: withClient(12), window: null }).bend_reasons).toEqual([]);
  });

  it("the self-check's bottleneck warning is no bend reason (it is the level's validity)", () => {
    const a = admissionSummary({
      ...held,
      level: withClient(0.2, "the client may be the bottleneck (…)"),
      samples: [{ t_ms: 500, running: 4, waiting: 0, kv_cache_usage_pct: 10 }],
      window: { startMs: 100, endMs: 900 },
    });
    expect(a.bend_reasons).toEqual([]);
  });

  it("no client-side queueing from the idle samples at a level's start and end", () => {
    // the server ran all 4 while the window lasted; its idle samples at 0 and 1000 are outside it
    const a = admissionSummary({
      level,
      records,
      samples: [
        { t_ms: 0, running: 0, waiting: 0, kv_cache_usage_pct: 0 },
        { t_ms: 500, running: 4, waiting: 0, kv_cache_usage_pct: 10 },
        { t_ms: 1000, running: 0, waiting: 0, kv_cache_usage_pct: 0 },
      ],
      metricsAvailable: true,
      queueDelta: null,
      limits: { maxRunningRequests: null, cudaGraphMaxBs: null },
      window: { startMs: 100, endMs: 900 },
    });
    expect(a.bend_reasons).not.toContain("client_queueing");
  });

  it("names a full KV cache", () => {
    const a = admissionSummary({
      level,
      records,
      samples: [{ t_ms: 0, running: 4, waiting: 0, kv_cache_usage_pct: 99 }],
      metricsAvailable: true,
      queueDelta: { sum: 0.4, count: 4 },
      limits: { maxRunningRequests: 8, cudaGraphMaxBs: null },
    });
    expect(a.bend_reasons).toEqual(["kv_full"]);
    expect(a.server_queue_time_mean_ms).toBeCloseTo(100, 9);
  });
});
