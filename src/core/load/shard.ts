/**
 * Splitting one level's load into shards (worker threads on one runner, or runners of a matrix),
 * so that the union of the shards is exactly the requested load. Pure; no I/O.
 *
 * Closed loop: the users are split as evenly as possible (16 over 3 shards: 6, 5, 5) and so is a
 * request count; request j of shard k is the level's request j * n + k. Open loop: the arrival
 * schedule is computed whole from the seed, as a single process would, and arrival j belongs to
 * shard j mod n: the merged arrivals are exactly the requested process. Ids derive from those
 * indexes, so the shards' records never collide and their union is the level's set of requests.
 */
import { UsageError } from "../../schema/errors.ts";

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

export const SINGLE: Shard = { index: 0, count: 1 };

/** `i/n` (1-based, as a matrix writes it) as a Shard. */
export function parseShard(s: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(s.trim());
  const i = m ? Number(m[1]) : Number.NaN;
  const n = m ? Number(m[2]) : Number.NaN;
  if (!m || n < 1 || i < 1 || i > n || n > 1024)
    throw new UsageError(`--shard must be i/n with 1 <= i <= n <= 1024 (e.g. 1/4), got "${s}"`, "--shard");
  return { index: i - 1, count: n };
}

/** `total` split into `n` near-equal whole parts, larger ones first. */
export function splitEven(total: number, n: number): number[] {
  const base = Math.floor(total / n);
  const extra = total - base * n;
  return Array.from({ length: n }, (_, k) => base + (k < extra ? 1 : 0));
}

/**
 * Where one load generator sits: its runner's shard of the whole (`--shard i/n`), and its
 * thread's shard of the runner's part (`--workers`). Users and counts are split runner first,
 * then thread; indexes interleave, so every placement's requests are disjoint and together are
 * exactly the level's, whatever number of threads each runner uses.
 */
export interface Placement {
  runner: Shard;
  thread: Shard;
}

export const WHOLE: Placement = { runner: SINGLE, thread: SINGLE };

/** This placement's part of `total` (users, requests, warmup requests). */
export const shareOf = (total: number, p: Placement): number =>
  splitEven(splitEven(total, p.runner.count)[p.runner.index]!, p.thread.count)[p.thread.index]!;

/** The level-wide index of this placement's `local`-th closed-loop (or warmup) request. */
export const closedIndex = (local: number, p: Placement): number =>
  (local * p.thread.count + p.thread.index) * p.runner.count + p.runner.index;

/** Whether open-loop arrival `j` of the level's whole schedule is this placement's. */
export const ownsArrival = (j: number, p: Placement): boolean =>
  j % p.runner.count === p.runner.index && Math.floor(j / p.runner.count) % p.thread.count === p.thread.index;

/** Whether the placement is the whole level (one runner, one thread). */
export const isWhole = (p: Placement): boolean => p.runner.count === 1 && p.thread.count === 1;

/** Ids of a sharded run: level i's requests are i * ID_STRIDE + index, warmups after WARMUP_ID_OFFSET. */
export const ID_STRIDE = 10_000_000;
export const WARMUP_ID_OFFSET = 5_000_000;
