import { describe, expect, it } from "vitest";
import { steadyWindow } from "../../../src/core/results/steady.ts";
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
});
