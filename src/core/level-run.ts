/**
 * Running one level: warmup, then the closed or open loop, with the client's self-check, the
 * /metrics sampler and the progress reports around it. Returns what was measured, untouched.
 */
import { performance } from "node:perf_hooks";
import type { LevelResult, RequestRecord, SweepConfig } from "../schema/v1.ts";
import type { StreamClient } from "./client.ts";
import { type LevelRun, runClosedLoop, runOpenLoop, runWarmup, type SpecFactory } from "./load.ts";
import { SelfCheck } from "./self-check.ts";
import type { MetricsSampler } from "./server-metrics.ts";
import type { LevelPlan } from "./sweep-plan.ts";

export interface Progress {
  level: number;
  levelIndex: number;
  levelCount: number;
  done: number;
  total: number | null;
  elapsedS: number;
  etaS: number | null;
}

export interface LevelRunContext {
  cfg: SweepConfig;
  client: StreamClient;
  sampler: MetricsSampler | null;
  onProgress?: ((p: Progress) => void) | undefined;
  shouldStop?: (() => boolean) | undefined;
}

export interface MeasuredLevel {
  warmup: RequestRecord[];
  run: LevelRun;
  client: LevelResult["client"];
}

export async function runLevel(
  ctx: LevelRunContext,
  plan: LevelPlan,
  makeSpec: SpecFactory,
): Promise<MeasuredLevel> {
  const { cfg, client, sampler } = ctx;
  const level = plan.level;
  const warmup = await runWarmup(
    client,
    makeSpec,
    cfg.warmup_requests,
    cfg.mode === "closed" ? level : Math.max(1, Math.ceil(level)),
  );
  const selfCheck = new SelfCheck();
  const t0 = performance.now();
  let done = 0;
  const report = () => {
    const elapsedS = (performance.now() - t0) / 1000;
    const total = plan.requests;
    const etaS =
      total !== null && done > 0
        ? (elapsedS / done) * (total - done)
        : cfg.duration_s !== null
          ? Math.max(0, cfg.duration_s - elapsedS)
          : null;
    ctx.onProgress?.({
      level,
      levelIndex: plan.index,
      levelCount: cfg.levels.length,
      done,
      total,
      elapsedS,
      etaS,
    });
  };
  const progressTimer = setInterval(report, 1000);
  sampler?.start();
  selfCheck.start();
  const common = {
    requests: plan.requests,
    durationS: cfg.duration_s,
    onRecord: () => {
      done++;
    },
    ...(ctx.shouldStop ? { shouldStop: ctx.shouldStop } : {}),
  };
  let run: LevelRun;
  try {
    run =
      cfg.mode === "closed"
        ? await runClosedLoop(client, makeSpec, { ...common, concurrency: level })
        : await runOpenLoop(client, makeSpec, {
            ...common,
            rateRps: level,
            arrival: cfg.arrival,
            burstiness: cfg.burstiness,
            seed: plan.seed,
            maxInFlight: cfg.max_in_flight,
          });
  } finally {
    clearInterval(progressTimer);
  }
  // The client's own queue: from dispatch (or, for a request that opened its connection, from
  // the moment the connection was up: connecting is the network's time, not the client's).
  const sendQueue = run.records
    .filter((r) => r.dispatch_ms !== undefined)
    .map((r) => r.send_ms - Math.max(r.dispatch_ms!, r.connected_ms ?? 0));
  const clientCheck = selfCheck.stop(sendQueue);
  await sampler?.stop();
  report();
  return { warmup, run, client: clientCheck };
}
