// A level's summary at the sizes users run: nothing in it spreads a per-request array into a call.
import { describe, expect, it } from "vitest";
import { openLoopSummary } from "../../../src/core/results/level-summary.ts";
import type { SweepConfig } from "../../../src/schema/v1.ts";
import { rec } from "../../helpers/records.ts";

describe("an open-loop level of 200,000 requests", () => {
  it("is summarised (a spread into Math.max overflowed the stack at about 120,000)", () => {
    const records = Array.from({ length: 200_000 }, (_, i) =>
      rec({ id: i, send_ms: i * 0.5, intended_send_ms: i * 0.5 - 0.1, events: [i * 0.5 + 10, i * 0.5 + 12] }),
    );
    const cfg = { mode: "open", arrival: "poisson", burstiness: 1 } as unknown as SweepConfig;
    const s = openLoopSummary(cfg, 2000, { records, droppedArrivals: 0, drainTimeS: 0 })!;
    expect(s.achieved_rate_rps).toBeCloseTo(2000, 0);
    expect(s.schedule_lag_ms.n).toBe(200_000);
  });
});
