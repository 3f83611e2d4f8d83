/**
 * Where this thread's `performance.now()` zero lies on the system's monotonic clock (what
 * `process.hrtime` reads, the same in every thread and process of the machine). Threads are put on
 * one timeline through it, and the mock's stamps (taken with `process.hrtime`) onto the client's.
 * `performance.timeOrigin` is no bridge: it is a wall-clock reading taken beside the thread's
 * monotonic one, so the pair drifts by whatever ran between the two reads (0.55 ms seen with both
 * cores busy). Here each pair is read between two monotonic reads and the tightest of several
 * kept, so the error is at most half that pair's spread (microseconds).
 */
import { performance } from "node:perf_hooks";

const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** The monotonic clock's reading at this thread's `performance.now()` zero, ms. */
export function monotonicOriginMs(samples = 7): number {
  let best = { spreadMs: Number.POSITIVE_INFINITY, originMs: 0 };
  for (let i = 0; i < samples; i++) {
    const before = hrMs();
    const now = performance.now();
    const after = hrMs();
    if (after - before < best.spreadMs)
      best = { spreadMs: after - before, originMs: (before + after) / 2 - now };
  }
  return best.originMs;
}
