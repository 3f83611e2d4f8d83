/** The harness watching itself: event-loop delay and CPU per level, so client overload is visible. */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import type { LevelResult } from "../schema/v1.ts";
import { summarize } from "./stats.ts";

export const SELF_CHECK_LIMITS = { eventLoopP99Ms: 5, cpuPctOfOneCore: 85, sendQueueP99Ms: 5 } as const;

export class SelfCheck {
  private readonly h = monitorEventLoopDelay({ resolution: 1 });
  private cpu0 = process.cpuUsage();
  private t0 = performance.now();

  start(): void {
    this.h.reset();
    this.h.enable();
    this.cpu0 = process.cpuUsage();
    this.t0 = performance.now();
  }

  stop(sendQueueMs: readonly number[] = []): LevelResult["client"] {
    this.h.disable();
    const cpu = process.cpuUsage(this.cpu0);
    const wallMs = performance.now() - this.t0;
    const ms = (ns: number) => (Number.isFinite(ns) && ns > 0 ? ns / 1e6 : null);
    const hasSamples = this.h.count > 0;
    const p50 = hasSamples ? ms(this.h.percentile(50)) : null;
    const p99 = hasSamples ? ms(this.h.percentile(99)) : null;
    const max = hasSamples ? ms(this.h.max) : null;
    const user = cpu.user / 1e6;
    const system = cpu.system / 1e6;
    const pct = wallMs > 0 ? (100 * (user + system) * 1000) / wallMs : 0;
    const reasons: string[] = [];
    if (p99 !== null && p99 > SELF_CHECK_LIMITS.eventLoopP99Ms)
      reasons.push(`event-loop delay p99 ${p99.toFixed(1)} ms > ${SELF_CHECK_LIMITS.eventLoopP99Ms} ms`);
    const sq = summarize(sendQueueMs);
    if (sq.p99 !== null && sq.p99 > SELF_CHECK_LIMITS.sendQueueP99Ms)
      reasons.push(`requests waited ${sq.p99.toFixed(1)} ms (p99) in the client before reaching the socket`);
    if (pct > SELF_CHECK_LIMITS.cpuPctOfOneCore)
      reasons.push(`client CPU ${pct.toFixed(0)}% of one core > ${SELF_CHECK_LIMITS.cpuPctOfOneCore}%`);
    return {
      event_loop_delay_ms: { p50, p99, max },
      send_queue_ms: { p50: sq.p50, p99: sq.p99, max: sq.max },
      cpu_user_s: user,
      cpu_system_s: system,
      cpu_pct_of_one_core: pct,
      bottleneck_warning:
        reasons.length > 0
          ? `the client may be the bottleneck (${reasons.join("; ")}): timestamps can be late by about the event-loop delay; latencies are measured from the socket write, the client's own queue is excluded and reported`
          : null,
    };
  }
}
