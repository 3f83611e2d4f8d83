/**
 * Timing assertions that hold on a busy machine: a latency the client measured is compared with
 * the server's own record of the same request (the mock, started with `serverTimestamps`, stamps
 * each event as it writes it and each request as it arrives), allowing the lateness the client
 * measured on itself meanwhile (its self-check: event-loop delay, busy part), not a fixed number
 * of milliseconds. What cannot be made relative belongs in bench/.
 */
import { expect } from "vitest";
import { SelfCheck } from "../../src/core/load/self-check.ts";
import type { LevelResult, RequestRecord } from "../../src/schema/v1.ts";

/** Both processes read one monotonic clock; converting the mock's stamps rounds to this much. */
const CLOCK_MS = 0.5;

type Check = LevelResult["client"];

/** `f` run with the client's self-check watching, as a level runs. */
export async function watched<T>(f: () => Promise<T>): Promise<{ value: T; check: Check }> {
  const sc = new SelfCheck();
  sc.start();
  const value = await f();
  return { value, check: sc.stop() };
}

/** The most the client may have read late in that stretch: its self-check's bound. */
export const allowanceMs = (check: Check): number => check.lateness_bound_ms ?? 1;

/** Per event: how long after the server wrote it the client read it, ms. */
export function deliveryLagsMs(records: readonly RequestRecord[]): number[] {
  return records.flatMap((r) => {
    const s = r.server_event_times_ms;
    if (!s) throw new Error(`request ${r.id} has no server stamps: start the mock with serverTimestamps`);
    return r.event_times_ms.map((t, i) => t - s[i]!);
  });
}

/**
 * Every event read no earlier than it was written; half of them within the client's stated
 * lateness bound, and the p99 within twice it. Twice: the self-check samples its loop every
 * 10 ms, so a stall shorter than that which falls between two samples goes unseen: on a machine
 * whose cores are both busy, such stalls pushed a level's p99 read lag past the bound itself.
 * A client that misread the stream (a buffered chunk, a late parse) is off by far more.
 */
export function expectReadOnTime(records: readonly RequestRecord[], check: Check, what = "events"): void {
  const lags = deliveryLagsMs(records).sort((a, b) => a - b);
  expect(lags.length, what).toBeGreaterThan(0);
  expect(lags[0]!, `${what}: read before the server wrote it?`).toBeGreaterThanOrEqual(-CLOCK_MS);
  const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))]!;
  const bound = allowanceMs(check) + CLOCK_MS;
  expect(at(0.5), `${what}: median read lag vs the client's lateness bound`).toBeLessThanOrEqual(bound);
  expect(at(0.99), `${what}: p99 read lag vs twice the client's lateness bound`).toBeLessThanOrEqual(
    2 * bound,
  );
}

/** The server's own TTFT of a request: from its arrival to its first event's write, ms. */
export function serverTtftMs(r: RequestRecord): number {
  if (r.server_arrival_ms === undefined || !r.server_event_times_ms?.length)
    throw new Error(`request ${r.id} has no server stamps: start the mock with serverTimestamps`);
  return r.server_event_times_ms[0]! - r.server_arrival_ms;
}

/** The gaps between a request's events as the server wrote them, ms. */
export const serverGapsMs = (r: RequestRecord): number[] =>
  (r.server_event_times_ms ?? []).slice(1).map((t, i) => t - r.server_event_times_ms![i]!);
