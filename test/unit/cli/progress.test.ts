// The progress line on a terminal that is not one (CI logs): a level's count out of its total, a
// search's probe out of the most it may send (its probes are found as it goes), a duration level's
// requests and its length, never "?".
import { afterEach, describe, expect, it, vi } from "vitest";
import { progressPrinter } from "../../../src/cli/sweep-command.ts";
import type { Progress } from "../../../src/core/load/level-run.ts";

const base: Progress = {
  level: 4,
  levelIndex: 1,
  levelCount: 3,
  done: 10,
  total: 10,
  elapsedS: 2.5,
  etaS: 0,
  durationS: null,
  maxProbes: null,
  unit: "users",
};
const printed = (p: Partial<Progress>) => {
  const out: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((s) => {
    out.push(String(s));
    return true;
  });
  progressPrinter(false)!({ ...base, ...p });
  spy.mockRestore();
  return out.join("");
};
afterEach(() => vi.restoreAllMocks());

describe("the progress line", () => {
  it("a level: its place among the levels and its requests out of the total", () => {
    expect(printed({})).toBe("level 4 [2/3] 10/10 requests, 2.5s elapsed, ETA 0s\n");
  });
  it("a search: the probe out of the most it may send, at its rate", () => {
    expect(printed({ level: 37.1109, levelIndex: 2, levelCount: 3, maxProbes: 8, unit: "req/s" })).toBe(
      "probe 3 (at most 8) at 37.11 req/s 10/10 requests, 2.5s elapsed, ETA 0s\n",
    );
  });
  it("an agent-capacity search: its probes are session counts", () => {
    expect(printed({ level: 6, levelIndex: 2, levelCount: 3, maxProbes: 8, unit: "sessions" })).toBe(
      "probe 3 (at most 8) at 6 sessions 10/10 requests, 2.5s elapsed, ETA 0s\n",
    );
  });
  it("a duration level: the requests so far and the level's length, no '?'", () => {
    // (the non-terminal printer writes a line every 10 s: the first one comes at once)
    const line = printed({ total: null, done: 7, durationS: 30, etaS: 27.5 });
    expect(line).toBe("level 4 [2/3] 7 requests of a 30 s level, 2.5s elapsed, ETA 28s\n");
    expect(line).not.toContain("?");
  });
});
