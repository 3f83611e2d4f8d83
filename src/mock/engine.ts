/**
 * The mock's engine: a timing and capacity model of a continuous-batching server. Admission
 * (FIFO queue, slots, KV budget, preemption), prefill and decode timing on one timer heap
 * scheduled against absolute times, the prefix cache, seeded faults and the counters behind
 * /metrics. It knows nothing of flavours: what differs between servers is in flavors/*.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { pieceOf, pieceText, usageJson, wire } from "./chunks.ts";
import type { EngineView, FlavorModule } from "./flavor.ts";
import { FLAVOR_MODULES } from "./flavors/index.ts";
import { HttpError, sendJson } from "./http.ts";
import { type FaultKind, HTTP_FAULTS, type MockOptions } from "./options.ts";
import { PrefixCache } from "./prefix-cache.ts";
import { Histogram, ITL_BUCKETS_S, LATENCY_BUCKETS_S } from "./prometheus.ts";
import { seededRandom } from "./random.ts";
import {
  completionBody,
  generatedTokens,
  type MockApi,
  type MockStats,
  newReq,
  outputPlan,
  type Req,
  validateCompletion,
} from "./request.ts";
import { openingEvents, streamText } from "./stream-text.ts";
import { TimerQueue } from "./timer-queue.ts";

const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export class Engine implements EngineView {
  private readonly timers = new TimerQueue();
  private readonly queue: Req[] = [];
  private readonly active = new Set<Req>();
  private readonly rand: () => number;
  private readonly faultRand: () => number;
  readonly cache: PrefixCache;
  readonly startedAtMs = performance.now();
  private seq = 0;
  private admitPending = false;
  promptTotal = 0;
  generationTotal = 0;
  private completed = 0;
  rejected = 0;
  private cancelled = 0;
  private zombies = 0; // requests the zombie fault freed in the account, still loading every prefill
  preemptions = 0;
  private events = 0;
  readonly faultCounts: Record<string, number> = {};
  private readonly lateness: number[] = [];
  /** Responses API: stored conversations (prompt and answer tokens) by response id, oldest first. */
  private readonly stored = new Map<string, string[]>();
  readonly h = {
    ttft: new Histogram(LATENCY_BUCKETS_S),
    itl: new Histogram(ITL_BUCKETS_S),
    e2e: new Histogram(LATENCY_BUCKETS_S),
    queue: new Histogram(LATENCY_BUCKETS_S),
    prefill: new Histogram(LATENCY_BUCKETS_S),
    decode: new Histogram(LATENCY_BUCKETS_S), // first token to last (vLLM's DECODE phase)
  };
  readonly flavor: FlavorModule;

  constructor(readonly o: MockOptions) {
    this.flavor = FLAVOR_MODULES[o.flavor];
    this.rand = seededRandom(o.seed);
    this.faultRand = seededRandom(o.seed ^ 0x9e3779b9);
    this.cache = new PrefixCache(o.prefixCacheTokens, o.blockTokens);
  }

  close(): void {
    this.timers.close();
  }

  stats(): MockStats {
    const s = Float64Array.from(this.lateness).sort();
    const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]! : null);
    return {
      requests: this.seq,
      completed: this.completed,
      rejected: this.rejected,
      cancelled: this.cancelled,
      running: this.active.size,
      waiting: this.queue.length,
      preemptions: this.preemptions,
      events: this.events,
      faults: { ...this.faultCounts },
      lateness: { n: s.length, p50: q(0.5), p99: q(0.99), max: s.length ? s[s.length - 1]! : null },
    };
  }

  get running(): number {
    return this.active.size;
  }
  get waiting(): number {
    return this.queue.length;
  }
  get requestsTotal(): number {
    return this.seq;
  }

  loading(): boolean {
    return performance.now() - this.startedAtMs < this.o.loadTimeS * 1000;
  }

  kvUsed(): number {
    let n = 0;
    for (const r of this.active) n += r.promptTokens.length + r.emitted;
    return n;
  }

  kvRatio(): number {
    return this.o.kvTokens > 0 ? this.kvUsed() / this.o.kvTokens : 0;
  }

  private countFault(kind: string): void {
    this.faultCounts[kind] = (this.faultCounts[kind] ?? 0) + 1;
  }

  private pickFault(seq: number): FaultKind | null {
    for (const f of this.o.faults) {
      if (f.every !== null && seq % f.every === 0) return f.kind;
      if (f.rate !== null && this.faultRand() < f.rate) return f.kind;
    }
    return null;
  }

  completion(
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    api: MockApi,
    arrival: number,
    arrivalHr: number,
  ): void {
    const o = this.o;
    const { promptTokens, maxTokens } = validateCompletion(body, api, o, this.stored);
    if (this.loading()) throw new HttpError(503, "model is still loading", "unavailable_error");
    const seq = ++this.seq;
    const fault = this.pickFault(seq);
    if (fault !== null) this.countFault(fault);
    const httpFault = fault !== null ? HTTP_FAULTS[fault] : undefined;
    if (httpFault) throw new HttpError(...httpFault);
    if (o.maxQueue !== null && this.active.size >= o.capacity && this.queue.length >= o.maxQueue) {
      this.rejected++;
      throw new HttpError(o.rejectStatus, "server queue is full", "rate_limit_error");
    }
    const { target, textKey } = outputPlan(body, fault, promptTokens, maxTokens, o, this.rand);
    const now = performance.now();
    const r = newReq({
      seq: textKey ?? seq,
      req,
      res,
      body,
      api,
      o,
      promptTokens,
      maxTokens,
      target,
      fault,
      arrival,
      arrivalHr,
    });
    this.promptTotal += promptTokens.length;
    res.on("close", () => {
      if (r.state === "done") return;
      this.cancelled++;
      // a leaking server keeps what the client let go: the slot stays taken, nothing more is sent
      if (r.fault === "zombie" && r.state === "running") this.zombies++; // freed below, decodes on
      if (r.fault === "leak" && r.state === "running") r.gen++;
      else this.finish(r, performance.now(), false);
    });
    const begin = () => {
      if (fault === "error_body") {
        // a 200 that carries an error instead of the stream asked for
        this.finish(r, performance.now(), false);
        return sendJson(res, 200, {
          error: { message: "injected fault: the engine is overloaded", type: "internal_error" },
        });
      }
      if (r.stream && o.protocol.includes("early-hints"))
        res.writeEarlyHints({ link: "</v1/models>; rel=preload" });
      if (r.stream) {
        const headers: Record<string, string> = {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
        };
        res.writeHead(200, { ...headers, ...this.flavor.streamHeaders });
        res.flushHeaders();
      }
      this.enqueue(r, performance.now());
    };
    if (fault === "slow_first_byte") this.timers.at(now + o.slowFirstByteMs, begin);
    else begin();
  }

  private enqueue(r: Req, t: number): void {
    if (r.state === "done") return;
    const someoneWaiting = this.queue.length > 0;
    this.queue.push(r);
    // A free slot takes a new arrival at once; behind a queue it waits its turn (FIFO).
    if (!someoneWaiting) this.admitWaiting(t);
  }

  /**
   * A slot freed while requests wait is filled at the scheduler's next iteration, one decode
   * step (ITL) later, as continuous-batching servers admit waiting requests between steps.
   */
  private scheduleAdmission(t: number): void {
    if (this.queue.length === 0 || this.admitPending) return;
    this.admitPending = true;
    const at = t + this.o.itlMs;
    this.timers.at(at, () => {
      this.admitPending = false;
      this.admitWaiting(at);
      if (this.queue.length > 0 && this.active.size < this.o.capacity) this.scheduleAdmission(at);
    });
  }

  private canAdmit(r: Req): boolean {
    if (this.active.size >= this.o.capacity) return false;
    if (this.o.kvTokens > 0 && this.active.size > 0) {
      return this.kvUsed() + r.promptTokens.length + r.emitted <= this.o.kvTokens;
    }
    return true;
  }

  private admitWaiting(t: number): void {
    while (this.queue.length > 0 && this.canAdmit(this.queue[0]!)) {
      const r = this.queue.shift()!;
      if (r.state === "done") continue;
      this.admit(r, t);
    }
  }

  private admit(r: Req, t: number): void {
    const o = this.o;
    r.state = "running";
    this.active.add(r);
    const resumed = r.emitted > 0;
    if (!resumed) {
      r.tAdmit = t;
      this.h.queue.observe((t - r.tArrive) / 1000);
      const hit = this.cache.lookupAndInsert(r.promptTokens);
      // cache_all: a response cache in front of the model serves every prompt whole, unasked.
      r.cachedTokens = r.fault === "cache_all" ? r.promptTokens.length : hit;
    }
    const uncached = resumed ? r.promptTokens.length + r.emitted : r.promptTokens.length - r.cachedTokens;
    // (each zombie's decode, never stopped, shares the batch every later prefill runs in)
    let prefill = o.ttftMs * (1 + 0.5 * this.zombies) + (o.prefillMsPer1k * uncached) / 1000;
    if (!resumed && o.ttftJitterMs > 0) prefill += -Math.log(1 - this.rand()) * o.ttftJitterMs;
    if (!resumed) this.h.prefill.observe(prefill / 1000);
    if (this.flavor.roleChunkAtAdmission && r.stream && !r.roleSent) {
      // FreeToken sends the role chunk as soon as the request is admitted, before prefill.
      r.roleSent = true;
      this.write(r, openingEvents(r));
    }
    const gen = r.gen;
    this.timers.at(t + prefill, () => this.emit(r, t + prefill, gen));
  }

  private itl(): number {
    const o = this.o;
    let d = o.itlMs * (1 + o.itlGrowthPerRunning * Math.max(0, this.active.size - 1));
    if (o.itlJitterMs > 0) d += (this.rand() * 2 - 1) * o.itlJitterMs;
    return Math.max(0, d);
  }

  private usageJson(r: Req): string {
    return usageJson(r, this.flavor.omitCachedDetailsWhenZero && r.cachedTokens === 0, this.o);
  }

  /**
   * Emit the event due at `scheduled`, and every later event of this stream that is already due
   * (zero or tiny ITL, or after a stall in the event loop), in one socket write.
   */
  private emit(r: Req, scheduled: number, gen: number): void {
    let out = "";
    let t = scheduled;
    for (;;) {
      const now = performance.now();
      const step = this.step(r, t, now);
      out += step.out;
      if (step.reset) {
        // Flush what was generated so far, then drop the connection with a TCP RST.
        const res = r.res;
        this.finish(r, now, false);
        res.write(wire(this.o, r.written++ === 0, out), () =>
          res.socket ? res.socket.resetAndDestroy() : res.destroy(),
        );
        return;
      }
      if (step.last) {
        if (out && r.stream) this.write(r, out);
        this.finish(r, now, true);
        return;
      }
      this.enforceKv();
      const next = t + this.itl() + step.extraDelayMs;
      if (r.state !== "running" || r.gen !== gen || next > performance.now()) {
        if (out && r.stream) this.write(r, out);
        if (r.state === "running" && r.gen === gen) this.timers.at(next, () => this.emit(r, next, gen));
        return;
      }
      t = next;
    }
  }

  /** Stream text onto the wire, in the configured protocol variant. */
  private write(r: Req, out: string): void {
    if (out !== "") r.res.write(wire(this.o, r.written++ === 0, out));
  }

  /** One stream event: bookkeeping and its SSE text (nothing written here). */
  private step(
    r: Req,
    scheduled: number,
    now: number,
  ): { out: string; last: boolean; reset: boolean; extraDelayMs: number } {
    const o = this.o;
    if (this.lateness.length < 1_000_000) this.lateness.push(now - scheduled);
    const k = Math.min(o.tokensPerChunk, r.target - r.emitted);
    const piece = pieceOf(r, k);
    const first = r.emitted === 0;
    r.emitted += k;
    this.generationTotal += k;
    this.events++;
    if (first) {
      r.tFirst = now;
      this.h.ttft.observe((now - r.tArrive) / 1000);
    } else {
      this.h.itl.observe((now - r.tLast) / 1000);
    }
    r.tLast = now;
    const half = Math.floor(r.target / 2);
    const crossedHalf = r.emitted >= half && r.emitted - k < half;
    // an error frame halfway ends the stream there
    const last = r.emitted >= r.target || (r.fault === "error_event" && crossedHalf);
    const extraDelayMs = r.fault === "stall" && crossedHalf ? o.stallS * 1000 : 0;
    if (!r.stream) {
      r.text.push(pieceText(piece));
      return { out: "", last, reset: false, extraDelayMs };
    }
    const ts = r.serverTs ? hrMs() : null;
    const usage = last ? this.usageJson(r) : "";
    const out = streamText(r, this.flavor, { piece, first, last, ts, usage, now });
    const reset = r.fault === "reset" && !last && r.emitted >= Math.max(1, half);
    return { out, last, reset, extraDelayMs };
  }

  /** A stored response for previous_response_id, the oldest dropped beyond 10,000. */
  private keep(id: string, tokens: string[]): void {
    this.stored.set(id, tokens);
    if (this.stored.size > 10_000) this.stored.delete(this.stored.keys().next().value!);
  }

  /** Over the KV budget: preempt the most recently admitted request (recompute policy). */
  private enforceKv(): void {
    const budget = this.o.kvTokens;
    if (budget <= 0) return;
    while (this.active.size > 1 && this.kvUsed() > budget) {
      let victim: Req | null = null;
      for (const x of this.active) if (victim === null || x.tAdmit >= victim.tAdmit) victim = x;
      if (victim === null) return;
      this.active.delete(victim);
      victim.state = "queued";
      victim.gen++;
      this.preemptions++;
      this.queue.unshift(victim);
    }
  }

  private finish(r: Req, t: number, ok: boolean): void {
    if (r.state === "done") return;
    const wasRunning = r.state === "running";
    r.state = "done";
    r.gen++;
    if (wasRunning) this.active.delete(r);
    else {
      const i = this.queue.indexOf(r);
      if (i >= 0) this.queue.splice(i, 1);
    }
    if (ok) {
      this.completed++;
      // the answer's full blocks join the prompt's in the cache (a conversation re-sends both)
      const conversation = [...r.promptTokens, ...generatedTokens(r)];
      this.cache.insert(conversation);
      if (r.store) this.keep(r.id, conversation);
      this.h.e2e.observe((t - r.tArrive) / 1000);
      if (r.tFirst > 0) this.h.decode.observe((t - r.tFirst) / 1000);
      if (r.stream) {
        r.res.end();
        if (this.flavor.closeAfterStream) r.res.once("finish", () => r.res.socket?.destroy());
      } else {
        sendJson(r.res, 200, completionBody(r, JSON.parse(this.usageJson(r)) as Record<string, unknown>));
      }
    }
    this.scheduleAdmission(t);
  }
}
