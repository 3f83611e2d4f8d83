/**
 * One timer for thousands of streams: a binary min-heap of absolute due times (performance.now()
 * ms). Work is scheduled against absolute times, never as chained sleeps, so lateness in one
 * event does not push back the next. A coarse setTimeout gets close, then setImmediate turns
 * finish the last millisecond, which keeps delivery within a fraction of a millisecond.
 */
import { performance } from "node:perf_hooks";

interface Entry {
  t: number;
  seq: number;
  fn: () => void;
}

export class TimerQueue {
  private heap: Entry[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private closed = false;

  at(t: number, fn: () => void): void {
    if (this.closed) return;
    const e = { t, seq: this.seq++, fn };
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.less(h[p]!, e)) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = e;
    if (i === 0) this.arm();
  }

  get size(): number {
    return this.heap.length;
  }

  close(): void {
    this.closed = true;
    this.heap = [];
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private less(a: Entry, b: Entry): boolean {
    return a.t < b.t || (a.t === b.t && a.seq < b.seq);
  }

  private pop(): Entry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      const n = h.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && this.less(h[r]!, h[l]!) ? r : l;
        if (this.less(last, h[c]!)) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }

  private arm(): void {
    if (this.closed || this.heap.length === 0) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.immediate) return; // a spin is already running; it will see the new head
    const d = this.heap[0]!.t - performance.now();
    if (d > 1.5) this.timer = setTimeout(() => this.fire(), d - 1);
    else this.immediate = setImmediate(() => this.fire());
  }

  private fire(): void {
    this.timer = null;
    this.immediate = null;
    const now = performance.now();
    const h = this.heap;
    while (h.length > 0 && h[0]!.t <= now) {
      const e = this.pop();
      e.fn();
    }
    this.arm();
  }
}
