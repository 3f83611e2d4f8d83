/**
 * The largest and smallest of many numbers, by a loop: a level may hold 10^6 requests, and
 * spreading them into Math.max/Math.min overflows the call stack (at about 120,000 here). The
 * boundaries test forbids the spread in src/. Empty: -Infinity / +Infinity, as Math.max() and
 * Math.min() give.
 */
export function maxOf(xs: Iterable<number>): number {
  let m = Number.NEGATIVE_INFINITY;
  for (const x of xs) if (x > m) m = x;
  return m;
}

export function minOf(xs: Iterable<number>): number {
  let m = Number.POSITIVE_INFINITY;
  for (const x of xs) if (x < m) m = x;
  return m;
}

/** The largest of the numbers that are there (null ones skipped), or null when none is. */
export function maxOrNull(xs: Iterable<number | null | undefined>): number | null {
  let m: number | null = null;
  for (const x of xs) if (typeof x === "number" && (m === null || x > m)) m = x;
  return m;
}
