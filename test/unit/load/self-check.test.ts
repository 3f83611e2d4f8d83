/** The self-check's evidence of data waiting in socket buffers (#10). */
import { describe, expect, it } from "vitest";
import { backlogEvidenceMs } from "../../../src/core/load/self-check.ts";

describe("backlog evidence for the saturated self-check", () => {
  it("events read together waited about (k - 1) gaps; none without batched reads", () => {
    const every10 = Array.from({ length: 20 }, (_, i) => 100 + i * 10);
    expect(backlogEvidenceMs([{ event_times_ms: every10 }])).toBeNull();
    // three events arrive in one read at 150 (sent at 130, 140, 150): the first waited ~20 ms
    const batched = [100, 110, 120, 150, 150, 150, 160, 170, 180];
    expect(backlogEvidenceMs([{ event_times_ms: every10 }, { event_times_ms: batched }])).toBe(20);
  });
});
