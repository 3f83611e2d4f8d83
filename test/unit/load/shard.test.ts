/**
 * Sharding a level (#15): whatever the runners and threads, the placements' users, counts,
 * request indexes and arrivals are disjoint and together exactly the level's.
 */
import { describe, expect, it } from "vitest";
import {
  closedIndex,
  ownsArrival,
  type Placement,
  parseShard,
  shareOf,
  splitEven,
} from "../../../src/core/load/shard.ts";
import { UsageError } from "../../../src/schema/errors.ts";

function placements(runners: number, threadsOf: (r: number) => number): Placement[] {
  const out: Placement[] = [];
  for (let i = 0; i < runners; i++) {
    const n = threadsOf(i);
    for (let k = 0; k < n; k++)
      out.push({ runner: { index: i, count: runners }, thread: { index: k, count: n } });
  }
  return out;
}

describe("shards", () => {
  it("splitEven: near-equal whole parts that add up", () => {
    expect(splitEven(16, 3)).toEqual([6, 5, 5]);
    expect(splitEven(2, 4)).toEqual([1, 1, 0, 0]);
    expect(splitEven(0, 2)).toEqual([0, 0]);
  });

  const layouts: [string, number, (r: number) => number][] = [
    ["1 runner, 1 thread", 1, () => 1],
    ["1 runner, 3 threads", 1, () => 3],
    ["2 runners, 1 thread each", 2, () => 1],
    ["3 runners with 1, 2 and 4 threads", 3, (r) => [1, 2, 4][r]!],
    ["4 runners, 2 threads each", 4, () => 2],
  ];
  for (const [name, runners, threads] of layouts) {
    it(`${name}: users and counts add up; indexes and arrivals are a partition`, () => {
      const ps = placements(runners, threads);
      for (const total of [1, 7, 16, 100, 1000]) {
        expect(ps.reduce((a, p) => a + shareOf(total, p), 0)).toBe(total);
        // closed loop: each placement's first shareOf(total) local requests, mapped to level indexes
        const idx = ps.flatMap((p) => Array.from({ length: shareOf(total, p) }, (_, j) => closedIndex(j, p)));
        expect(new Set(idx).size).toBe(idx.length);
        // open loop: every arrival of the schedule belongs to exactly one placement
        for (let j = 0; j < total; j++) expect(ps.filter((p) => ownsArrival(j, p)).length).toBe(1);
      }
      // closed-loop indexes of the whole level (any count): every index has exactly one owner
      const owners = new Map<number, number>();
      ps.forEach((p, pi) => {
        for (let j = 0; j < 200; j++)
          owners.set(closedIndex(j, p), (owners.get(closedIndex(j, p)) ?? 0) + 1 + pi * 0);
      });
      for (let m = 0; m < 200; m++) expect(owners.get(m)).toBe(1);
    });
  }

  it("--shard i/n is 1-based and checked", () => {
    expect(parseShard("2/4")).toEqual({ index: 1, count: 4 });
    for (const bad of ["0/2", "3/2", "1/0", "a/b", "1-2", ""])
      expect(() => parseShard(bad)).toThrow(UsageError);
  });
});
