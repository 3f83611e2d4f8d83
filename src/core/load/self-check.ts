/**
 * The harness watching itself, per level: event-loop delay, CPU, and the client's own queue
 * before the socket write, so that client overload is visible and its effect bounded.
 *
 * Lateness: a chunk that reaches the socket while the loop is busy is read at the next poll phase
 * at the latest, so it waits about one loop turn, plus the turn in which its own read queues
 * behind other ready sockets: about two turns, which the event-loop delay histogram sees as the
 * lateness of its timer. Add 1 ms the histogram cannot see at a 10 ms sampling interval (the
 * process's wake-up from an idle poll, libuv's millisecond timer clock). So the self-check
 * estimates the delivery lag's p99 as 2 x the loop delay's p99 + 1 ms; it states as the bound
 * 2 x the longest loop delay + 1 ms. bench/self-check.ts holds both against server-written send
 * times from 1 to 1,000 streams.
 *
 * Whose lateness: each delay sample is split into the part the loop spent busy (the client's own
 * work: its busy time, no more than the CPU the process used meanwhile) and the part it spent
 * waiting to be woken or to be given a core again (the machine's scheduling). When the lag
 * estimate exceeds 2 ms and the busy part's p99 alone exceeds 2 ms, or the loop is saturated, it
 * warns that the client may be the bottleneck; otherwise a lag estimate over 2 ms is a timing note
 * (the machine woke the client late: more threads would not help). It also names it when
 * requests queued in the client more than 5 ms (p99) while its loop was busy, and warns when the
 * client used most of a core.
 */
import { createHistogram, performance, type RecordableHistogram } from "node:perf_hooks";
import type { LevelResult } from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import { summarize } from "../results/stats.ts";

export const SELF_CHECK_LIMITS = { lateMs: 2, cpuPctOfOneCore: 85, sendQueueP99Ms: 5 } as const;
/** Event-loop utilization above which reads queue behind each other and data waits in socket buffers. */
const SATURATED_ELU = 0.5;
/** The shortest level whose CPU share says anything about the client's load, ms. */
const MIN_CPU_WINDOW_MS = 500;

/**
 * How long data waited in the socket buffers, from the stream itself: events that reached the
 * client in one read (the same receive time) were sent one gap apart, so the first of k waited
 * about (k - 1) gaps, the gap being the stream's mean gap between events (its span over its
 * events: batching moves events within a stream, not its length). The largest such wait over the
 * level, or null without batched reads. Used only when the loop is busy: a server may batch chunks
 * itself, and then this over-states (a bound may; a warning may not).
 */
export function backlogEvidenceMs(records: readonly { event_times_ms: readonly number[] }[]): number | null {
  let worst: number | null = null;
  for (const r of records) {
    const t = r.event_times_ms;
    if (t.length < 3) continue;
    const gap = (t[t.length - 1]! - t[0]!) / (t.length - 1);
    if (!(gap > 0)) continue;
    let k = 1;
    for (let i = 1; i <= t.length; i++) {
      if (i < t.length && t[i] === t[i - 1]) k++;
      else {
        if (k > 1) worst = Math.max(worst ?? 0, (k - 1) * gap);
        k = 1;
      }
    }
  }
  return worst;
}
/** What the delay histogram cannot see at its sampling interval: wake-up and timer granularity. */
const UNSEEN_MS = 1;
/** Sampling interval, ms: coarse enough to cost little at idle (1 ms cost 2 % of a core). */
const RESOLUTION_MS = 10;

/** The process's CPU so far, user + system, µs. */
function processCpuUs(): number {
  const c = process.cpuUsage();
  return c.user + c.system;
}

export class SelfCheck {
  /** Per sample: how late the sampling timer fired (ns, at least 1). */
  private readonly h = createHistogram();
  /** Per sample: the part of that lateness during which the client's own loop was busy. */
  private readonly own = createHistogram();
  private timer: NodeJS.Timeout | null = null;
  private lastMs = 0;
  private lastIdleMs = 0;
  /** The process's CPU (user + system, µs) at the last sample: this thread's work is at most its share. */
  private lastCpuUs = 0;

  /**
   * One sample every RESOLUTION_MS: the timer's lateness, as `monitorEventLoopDelay` records it,
   * and the share of it the loop spent busy (event-loop utilization between two samples: time in
   * the poll wait, a late wake-up included, is idle). Lateness with an idle loop is the machine
   * waking the process late; lateness with a busy loop is the client's own work.
   */
  private sample = (): void => {
    const now = performance.now();
    const idleMs = performance.eventLoopUtilization().idle;
    const cpuUs = processCpuUs();
    const lateMs = Math.max(0, now - this.lastMs - RESOLUTION_MS);
    const busyMs = Math.max(0, now - this.lastMs - (idleMs - this.lastIdleMs));
    // A loop taken off its core while out of its poll wait reads busy for as long as the machine
    // kept it off (a busy runner: 2.7 ms p99 on an idle process); the CPU it spent is its work.
    const workMs = Math.min(busyMs, Math.max(0, (cpuUs - this.lastCpuUs) / 1000));
    this.h.record(Math.max(1, Math.round(lateMs * 1e6)));
    this.own.record(Math.max(1, Math.round(Math.min(lateMs, workMs) * 1e6)));
    this.lastMs = now;
    this.lastIdleMs = idleMs;
    this.lastCpuUs = cpuUs;
    this.timer?.refresh();
  };
  private cpu0 = process.cpuUsage();
  private elu0 = performance.eventLoopUtilization();
  private t0 = performance.now();

  /**
   * `thread`: this is a worker thread among others, where process CPU is everyone's; its "CPU"
   * is then the time its own event loop was busy (event-loop utilization), which is what bounds it.
   */
  constructor(private readonly thread = false) {}

  start(): void {
    this.h.reset();
    this.own.reset();
    this.lastMs = performance.now();
    this.lastIdleMs = performance.eventLoopUtilization().idle;
    this.lastCpuUs = processCpuUs();
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.sample, RESOLUTION_MS);
    this.timer.unref();
    this.cpu0 = process.cpuUsage();
    this.elu0 = performance.eventLoopUtilization();
    this.t0 = performance.now();
  }

  /**
   * `sendQueueMs`: per request, the wait in the client before its headers reached the socket.
   * `records`: the level's records, read for backlog when the client was saturated.
   */
  stop(
    sendQueueMs: readonly number[] = [],
    records: readonly { event_times_ms: readonly number[] }[] = [],
  ): LevelResult["client"] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const cpu = process.cpuUsage(this.cpu0);
    const wallMs = performance.now() - this.t0;
    const ms = (ns: number) => (Number.isFinite(ns) && ns > 0 ? ns / 1e6 : 0);
    const figures = (h: RecordableHistogram) =>
      this.h.count > 0
        ? { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) }
        : { p50: null, p99: null, max: null };
    const { p50, p99, max } = figures(this.h);
    const ownDelay = figures(this.own);
    const elu = performance.eventLoopUtilization(this.elu0);
    const user = this.thread ? elu.active / 1000 : cpu.user / 1e6;
    const system = this.thread ? 0 : cpu.system / 1e6;
    const pct = wallMs > 0 ? (100 * (user + system) * 1000) / wallMs : 0;
    // Over a level shorter than this, the CPU share is a few milliseconds of set-up work over
    // fewer: no sign of a loaded client.
    const cpuKnown = wallMs >= MIN_CPU_WINDOW_MS;
    const saturated =
      cpuKnown && (pct > SELF_CHECK_LIMITS.cpuPctOfOneCore || elu.utilization > SATURATED_ELU);
    let bound = max !== null ? 2 * max + UNSEEN_MS : null;
    // A saturated loop leaves data waiting in the socket buffers, which no loop-delay figure sees;
    // the stream shows it: events that arrive in one read waited for it (see backlogEvidenceMs).
    if (saturated) {
      const backlog = backlogEvidenceMs(records);
      if (backlog !== null) bound = Math.max(bound ?? 0, backlog + 2 * (p99 ?? 0) + UNSEEN_MS);
    }
    const lagP99 = p99 !== null ? 2 * p99 + UNSEEN_MS : null;
    // The client is the cause when its own work alone makes it late by more than the limit: a
    // read waits at most the busy stretch it lands in, and the busy part of the delay's p99 says
    // how long those stretches were. Otherwise the machine's wake-ups are the larger cause.
    const ownCause = ownDelay.p99 !== null && ownDelay.p99 > SELF_CHECK_LIMITS.lateMs;
    const late = lagP99 !== null && lagP99 > SELF_CHECK_LIMITS.lateMs;
    const reasons: string[] = [];
    if (late && (ownCause || saturated))
      reasons.push(
        `reads late by about ${lagP99!.toFixed(1)} ms (p99; event-loop delay p99 ${p99!.toFixed(1)} ms, ${ownDelay.p99!.toFixed(1)} ms of it with the client busy) > ${SELF_CHECK_LIMITS.lateMs} ms`,
      );
    const sq = summarize(sendQueueMs);
    // A queue before the socket write is the client's when its loop was busy too: an idle loop's
    // one-off stall (the burst of writes as a closed loop's users start together) is no bottleneck.
    if (sq.p99 !== null && sq.p99 > SELF_CHECK_LIMITS.sendQueueP99Ms && (ownCause || saturated))
      reasons.push(`requests waited ${sq.p99.toFixed(1)} ms (p99) in the client before reaching the socket`);
    if (cpuKnown && pct > SELF_CHECK_LIMITS.cpuPctOfOneCore)
      reasons.push(`client CPU ${pct.toFixed(0)}% of one core > ${SELF_CHECK_LIMITS.cpuPctOfOneCore}%`);
    // Late with an idle client: the machine woke the process late (scheduling, virtualisation).
    // Worth knowing, but no bottleneck: more threads would not help.
    const timingNote =
      reasons.length === 0 && late
        ? `timing noise: the client read about ${lagP99!.toFixed(1)} ms late (p99 estimate; at most ${(bound ?? 0).toFixed(1)} ms) while busy ${(100 * elu.utilization).toFixed(0)} % of the time (event-loop delay p99 ${(p99 ?? 0).toFixed(1)} ms, ${(ownDelay.p99 ?? 0).toFixed(1)} ms of it busy): the machine woke it late (scheduling, virtualisation), not client load, so --workers would not help; TTFT and ITL carry up to that much of it`
        : null;
    return {
      event_loop_delay_ms: { p50, p99, max },
      own_delay_ms: ownDelay,
      send_queue_ms: { p50: sq.p50, p99: sq.p99, max: sq.max },
      lateness_bound_ms: bound,
      cpu_user_s: user,
      cpu_system_s: system,
      cpu_pct_of_one_core: pct,
      bottleneck_warning:
        reasons.length > 0
          ? `the client may be the bottleneck (${reasons.join("; ")}): ${bound !== null && bound > 0 ? `it may read what the server sent up to ${bound.toFixed(1)} ms late, which inflates TTFT and ITL by as much` : "how late it read is not known (the level was too short for the loop-delay sampler), and TTFT and ITL may carry it"}; latencies count from the socket write, so the client's own queue is excluded and reported`
          : null,
      timing_note: timingNote,
    };
  }
}

/**
 * The client's own queue per request: from dispatch (or, for a request that opened its
 * connection, from the moment the connection was up: connecting is the network's time, not the
 * client's) to the socket write.
 */
export function sendQueueOf(
  records: readonly { send_ms: number; dispatch_ms?: number; connected_ms?: number }[],
): number[] {
  return records
    .filter((r) => r.dispatch_ms !== undefined)
    .map((r) => r.send_ms - Math.max(r.dispatch_ms!, r.connected_ms ?? 0));
}

/** The largest of the known figures (a chunk is as late as the slowest reader), or null. */
export function worstOf(xs: readonly (number | null | undefined)[]): number | null {
  const v = xs.filter((x): x is number => typeof x === "number");
  return v.length > 0 ? maxOf(v) : null;
}

/**
 * The level's self-check from its threads': the worst thread's loop delay and lateness bound
 * (a chunk is as late as the thread that read it), the process's CPU, each thread's warning
 * named, and every thread's own figures under `shards`.
 */
export function mergeChecks(
  threads: readonly { check: LevelResult["client"]; requests: number }[],
  processWide: LevelResult["client"],
): LevelResult["client"] {
  const checks = threads.map((t) => t.check);
  const worst = (f: (c: LevelResult["client"]) => number | null | undefined) => worstOf(checks.map(f));
  const n = checks.length;
  // each thread's message, prefixed with the thread it is from
  const byThread = (pick: (c: LevelResult["client"]) => string | null | undefined) =>
    checks
      .map((c, k) => (pick(c) ? `thread ${k + 1}/${n}: ${pick(c)}` : null))
      .filter((w): w is string => w !== null);
  const warnings = byThread((c) => c.bottleneck_warning);
  const notes = byThread((c) => c.timing_note);
  return {
    event_loop_delay_ms: {
      p50: worst((c) => c.event_loop_delay_ms.p50),
      p99: worst((c) => c.event_loop_delay_ms.p99),
      max: worst((c) => c.event_loop_delay_ms.max),
    },
    own_delay_ms: {
      p50: worst((c) => c.own_delay_ms?.p50),
      p99: worst((c) => c.own_delay_ms?.p99),
      max: worst((c) => c.own_delay_ms?.max),
    },
    ...(processWide.send_queue_ms ? { send_queue_ms: processWide.send_queue_ms } : {}),
    lateness_bound_ms: worst((c) => c.lateness_bound_ms ?? null),
    cpu_user_s: processWide.cpu_user_s,
    cpu_system_s: processWide.cpu_system_s,
    cpu_pct_of_one_core: processWide.cpu_pct_of_one_core,
    bottleneck_warning: warnings.length > 0 ? warnings.join("; ") : null,
    timing_note: warnings.length === 0 && notes.length > 0 ? notes.join("; ") : null,
    shards: checks.map((c, k) => ({
      thread: `${k + 1}/${n}`,
      requests: threads[k]!.requests,
      event_loop_delay_ms: c.event_loop_delay_ms,
      lateness_bound_ms: c.lateness_bound_ms ?? null,
      busy_pct: c.cpu_pct_of_one_core,
      bottleneck_warning: c.bottleneck_warning,
    })),
  };
}
