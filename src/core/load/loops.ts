/**
 * Load generators. Closed loop: N users, each sending its next request when the previous one
 * ends. Open loop: arrivals at precomputed absolute times (Poisson, constant or gamma), sent
 * whether or not earlier requests finished; latencies are also measured from the intended send
 * so client-side queueing (e.g. under --max-in-flight) is never hidden (coordinated omission).
 */
import { performance } from "node:perf_hooks";
import { setImmediate as yieldImmediate } from "node:timers/promises";
import type { RequestRecord } from "../../schema/v1.ts";
import { buildRequestBody, type RequestSpec } from "../client/request-body.ts";
import type { StreamClient } from "../client/stream-client.ts";
import { type ArrivalKind, arrivalOffsetsMs } from "../workload/arrivals.ts";
import { ownsArrival, type Placement } from "./shard.ts";

/** `--turns`: where a conversation stands when its next turn is built. */
export interface TurnContext {
  /** The conversation's id (its first turn's request id); ignored for turn 1. */
  session: number;
  /** The turn to build, from 1. */
  turn: number;
  /** Earlier user turns and the server's answers, in order. */
  history: { role: string; content: string }[];
  /** Responses API: the previous turn's response id (`--responses-chain` sends it instead of the history). */
  previousResponseId?: string;
}

export type SpecFactory = (
  index: number,
  warmup: boolean,
  intendedSendAbsMs: number | null,
  turn?: TurnContext,
) => RequestSpec;

export interface LevelRun {
  records: RequestRecord[];
  droppedArrivals: number;
  /** Open loop: time from the last arrival's intended send to the last request's end. */
  drainTimeS: number | null;
  /** Open loop: the last arrival's intended send (ms on the run's clock), to merge shards' drains. */
  lastIntendedMs?: number;
}

/** The longest one timer holds (2^31 - 1 ms, 24.8 days); a longer wait is a chain of them. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Sleep until an absolute performance.now() time, or until `stop` aborts (SIGINT/SIGTERM), which
 * ends the wait at once: a coarse timer (chained past what one timer holds), then yielding spins
 * (I/O runs between them). The spins re-arm one callback, not a promise each: a promise per spin
 * was about 300 MB of garbage per 10 s at 200 req/s, and its GC pauses made sends late. Callers
 * check `stop.aborted` after it, so nothing is sent once the signal came.
 */
/**
 * When a level that must start at `notBeforeEpochMs` (a shard's slot) starts: then, or 50 ms from
 * now (the time to arm the first timers) when the slot is closer or already past. `lateMs` is how
 * far past its slot it starts (0 on time), null without a slot.
 */
export function slotStart(notBeforeEpochMs: number | null): { startEpochMs: number; lateMs: number | null } {
  const earliest = performance.timeOrigin + performance.now() + 50;
  if (notBeforeEpochMs === null) return { startEpochMs: earliest, lateMs: null };
  return {
    startEpochMs: Math.max(earliest, notBeforeEpochMs),
    lateMs: Math.max(0, earliest - notBeforeEpochMs),
  };
}

export function sleepUntil(tAbsMs: number, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      stop?.removeEventListener("abort", finish);
      resolve();
    };
    const spin = () => {
      if (finished) return;
      const d = tAbsMs - performance.now();
      if (d <= 0 || stop?.aborted) finish();
      else if (d > 3) timer = setTimeout(spin, Math.min(d - 2, MAX_TIMER_MS));
      else setImmediate(spin);
    };
    if (stop && tAbsMs - performance.now() > 3) stop.addEventListener("abort", finish, { once: true });
    spin();
  });
}

/** What every load generator takes: how much to send, and hooks for progress and stopping. */
interface LoopCommon {
  requests: number | null;
  durationS: number | null;
  onRecord?: (r: RequestRecord) => void;
  /** Aborted on SIGINT/SIGTERM: every wait ends at once and nothing more is sent. */
  stop?: AbortSignal;
  /** Start at this absolute performance.now() time (shards of one level start together). */
  startAtAbsMs?: number;
  /**
   * Ramp-up (`--ramp-up-s`): users start one after another, or the arrival rate rises linearly
   * from 0, over this many seconds before measurement starts. Requests sent during the ramp are
   * marked `ramp` (and `warmup`, so no figure counts them) and numbered from RAMP_INDEX.
   */
  rampUpS?: number;
}

/** Ramp requests' indexes start here (after warmups', before nothing else). */
export const RAMP_INDEX = 1_000_000;

function markRamp(rec: RequestRecord): RequestRecord {
  rec.warmup = true;
  rec.ramp = true;
  return rec;
}

export interface ClosedLoopOptions extends LoopCommon {
  concurrency: number;
  /** `--turns T --think-time-ms MS`: each user holds conversations of T turns. */
  sessions?: { turns: number; thinkTimeMs: number } | null;
}

export async function runClosedLoop(
  client: StreamClient,
  makeSpec: SpecFactory,
  opts: ClosedLoopOptions,
): Promise<LevelRun> {
  const records: RequestRecord[] = [];
  let next = 0;
  let rampNext = 0;
  if (opts.startAtAbsMs !== undefined) await sleepUntil(opts.startAtAbsMs, opts.stop);
  const rampMs = (opts.rampUpS ?? 0) * 1000;
  const t0 = performance.now();
  const measureFrom = t0 + rampMs;
  const deadline = opts.durationS !== null ? measureFrom + opts.durationS * 1000 : Number.POSITIVE_INFINITY;
  const limit = opts.requests ?? Number.POSITIVE_INFINITY;
  const user = async (k: number) => {
    if (rampMs > 0) {
      // user k of n joins at k/n of the ramp; until it ends, what it sends is ramp load (its
      // first send keeps the time it was due: the ramp's schedule can be checked)
      const joinAt = t0 + (rampMs * k) / opts.concurrency;
      await sleepUntil(joinAt, opts.stop);
      let due: number | null = joinAt;
      while (performance.now() < measureFrom && !opts.stop?.aborted) {
        const rec = markRamp(await client.stream(makeSpec(RAMP_INDEX + rampNext++, true, due)));
        due = null;
        records.push(rec);
        await yieldImmediate();
      }
    }
    const sessions = opts.sessions ?? null;
    let conversation: TurnContext | null = null;
    for (;;) {
      // think time: the user reads the answer before sending the conversation's next turn
      if (conversation !== null && sessions!.thinkTimeMs > 0)
        await sleepUntil(performance.now() + sessions!.thinkTimeMs, opts.stop);
      if (next >= limit || performance.now() >= deadline || opts.stop?.aborted) return;
      const i = next++;
      const spec = sessions
        ? makeSpec(i, false, null, conversation ?? { session: 0, turn: 1, history: [] })
        : makeSpec(i, false, null);
      const rec = await client.stream(spec);
      records.push(rec);
      opts.onRecord?.(rec);
      if (sessions) conversation = nextTurn(spec, rec, sessions.turns);
      // One macrotask of "think time": undici returns the connection to its pool after the
      // response callbacks, so the next request reuses it instead of opening a new one.
      await yieldImmediate();
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, (_, k) => user(k)));
  return { records, droppedArrivals: 0, drainTimeS: null };
}

/**
 * After a conversation's turn: the history for the next one (what was sent, then the answer), or
 * null when the conversation is over (its last turn, or a failed turn: a new one starts).
 */
export function nextTurn(spec: RequestSpec, rec: RequestRecord, turns: number): TurnContext | null {
  const turn = spec.turn ?? 1;
  if (rec.error !== null || turn >= turns || spec.responseText === undefined) return null;
  return {
    session: spec.session ?? spec.id,
    turn: turn + 1,
    history: [...(spec.messages ?? []), { role: "assistant", content: spec.responseText }],
    ...(spec.responseId !== undefined ? { previousResponseId: spec.responseId } : {}),
  };
}

export interface OpenLoopOptions extends LoopCommon {
  rateRps: number;
  arrival: ArrivalKind;
  burstiness: number;
  seed: number;
  maxInFlight: number | null;
  /** Send only this placement's arrivals of the whole schedule (default: all of them). */
  shard?: Placement;
  /** A trace's send times (ms from the start), instead of the arrival process's. */
  offsetsMs?: readonly number[];
}

export async function runOpenLoop(
  client: StreamClient,
  makeSpec: SpecFactory,
  opts: OpenLoopOptions,
): Promise<LevelRun> {
  // A trace's offsets come cut to --requests / --duration already (trace.ts: traceRows).
  const offsets = opts.offsetsMs
    ? opts.offsetsMs
    : arrivalOffsetsMs({
        kind: opts.arrival,
        rateRps: opts.rateRps,
        burstiness: opts.burstiness,
        seed: opts.seed,
        ...(opts.requests !== null ? { count: opts.requests } : {}),
        ...(opts.durationS !== null ? { durationS: opts.durationS } : {}),
      });
  const records: RequestRecord[] = [];
  const pending: Promise<void>[] = [];
  let inFlight = 0;
  let slotWaiters: (() => void)[] = [];
  let dropped = 0;
  // Every request is built and serialized before the first arrival, so sending is all that
  // happens at an arrival's time; intended times are patched in once the start is known.
  const mine = offsets.map((_, j) => j).filter((j) => opts.shard === undefined || ownsArrival(j, opts.shard));
  const specs = mine.map((j) => {
    const spec = makeSpec(j, false, 0);
    spec.body = JSON.stringify(buildRequestBody(client.cfg, spec));
    return spec;
  });
  const t0 = opts.startAtAbsMs ?? performance.now() + 5; // a few ms to get the first timer armed
  const rampMs = (opts.rampUpS ?? 0) * 1000;
  // The ramp: the rate rising linearly from 0 to the level over rampMs, arrivals where the
  // cumulative intensity rate * t^2 / (2 * ramp) crosses a whole number (t_k = sqrt(2 k ramp / rate)).
  if (rampMs > 0) {
    const n = Math.floor((opts.rateRps * rampMs) / 2000);
    for (let k = 0; k < n; k++) {
      if (opts.shard !== undefined && !ownsArrival(k, opts.shard)) continue;
      const due = t0 + Math.sqrt((2 * k * rampMs) / (opts.rateRps / 1000));
      await sleepUntil(due, opts.stop);
      if (opts.stop?.aborted) break;
      pending.push(
        // its intended time kept, as for measured arrivals: the ramp's schedule can be checked
        client.stream(makeSpec(RAMP_INDEX + k, true, due)).then((rec) => {
          records.push(markRamp(rec));
        }),
      );
    }
  }
  const start = t0 + rampMs;
  for (let i = 0; i < mine.length; i++) {
    const intended = start + offsets[mine[i]!]!;
    const spec = specs[i]!;
    spec.intendedSendAbsMs = intended;
    await sleepUntil(intended, opts.stop);
    if (opts.maxInFlight !== null) {
      while (inFlight >= opts.maxInFlight && !opts.stop?.aborted)
        await new Promise<void>((res) => slotWaiters.push(res));
    }
    if (opts.stop?.aborted) {
      dropped = mine.length - i;
      break;
    }
    inFlight++;
    const p = client.stream(spec).then((rec) => {
      inFlight--;
      records.push(rec);
      opts.onRecord?.(rec);
      if (slotWaiters.length > 0) {
        const w = slotWaiters;
        slotWaiters = [];
        for (const f of w) f();
      }
    });
    pending.push(p);
  }
  await Promise.all(pending);
  const lastIntended = mine.length > 0 ? start + offsets[mine[mine.length - 1]!]! : start;
  let lastEnd = Number.NEGATIVE_INFINITY;
  for (const r of records) if (r.end_ms !== null && r.end_ms > lastEnd) lastEnd = r.end_ms;
  const origin = client.cfg.originMs;
  const drain = Number.isFinite(lastEnd) ? Math.max(0, lastEnd - (lastIntended - origin)) / 1000 : null;
  return { records, droppedArrivals: dropped, drainTimeS: drain, lastIntendedMs: lastIntended - origin };
}

/** Warmup: `count` requests at up to `concurrency` in parallel; records are marked warmup. */
export async function runWarmup(
  client: StreamClient,
  makeSpec: SpecFactory,
  count: number,
  concurrency: number,
): Promise<RequestRecord[]> {
  if (count <= 0) return [];
  const out: RequestRecord[] = [];
  let next = 0;
  const user = async () => {
    while (next < count) {
      const i = next++;
      out.push(await client.stream(makeSpec(i, true, null)));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, user));
  return out;
}
