/**
 * Running one level: warmup, then the closed or open loop (shard-run.ts), with the client's
 * self-check, the /metrics sampler and the progress reports around it. Returns what was measured,
 * untouched.
 */
import { performance } from "node:perf_hooks";
import type { LevelResult, PromptCalibration, RequestRecord, SweepConfig } from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import type { StreamClient } from "../client/stream-client.ts";
import type { MetricsSampler } from "../server/metrics-sampler.ts";
import type { Dataset } from "../workload/dataset.ts";
import type { LevelPlan } from "./level-plan.ts";
import { type LevelRun, sleepUntil, slotStart } from "./loops.ts";
import type { IdScheme } from "./requests.ts";
import { mergeChecks, SelfCheck, sendQueueOf } from "./self-check.ts";
import { type Shard, SINGLE, shareOf } from "./shard.ts";
import { runShare, runShareWarmup, type ShareJob } from "./shard-run.ts";
import type { ThreadPool, ThreadResult } from "./thread-pool.ts";

export interface Progress {
  level: number;
  levelIndex: number;
  levelCount: number;
  done: number;
  total: number | null;
  elapsedS: number;
  etaS: number | null;
  /** A level that runs for a duration (no request count), s. */
  durationS: number | null;
  /** A saturation search: the most probes it may send (its levels are probes, their count not known). */
  maxProbes: number | null;
  /** What a level counts: concurrent users (an agent search's: sessions) or arrivals per second. */
  unit: "users" | "sessions" | "req/s";
}

export interface LevelRunContext {
  cfg: SweepConfig;
  client: StreamClient;
  sampler: MetricsSampler | null;
  onProgress?: ((p: Progress) => void) | undefined;
  /** Aborted on SIGINT/SIGTERM: waits end at once, nothing more is sent. */
  stop?: AbortSignal | undefined;
  /** Worker threads (`--workers` > 1), or null: the main thread sends. */
  pool?: ThreadPool | null;
  /** `--trace`: the send times (ms from the level's start) instead of the arrival process's. */
  offsetsMs?: readonly number[] | null;
}

export interface MeasuredLevel {
  warmup: RequestRecord[];
  run: LevelRun;
  client: LevelResult["client"];
  /** A sharded level: how far past its start slot it began (0 on time); null without a slot. */
  startLateMs?: number | null;
}

function progressReporter(ctx: LevelRunContext, plan: LevelPlan, done: () => number) {
  const t0 = performance.now();
  return () => {
    const elapsedS = (performance.now() - t0) / 1000;
    const total = plan.requests;
    const n = done();
    const etaS =
      total !== null && n > 0
        ? (elapsedS / n) * (total - n)
        : plan.durationS !== null
          ? Math.max(0, plan.durationS - elapsedS)
          : null;
    ctx.onProgress?.({
      level: plan.level,
      levelIndex: plan.index,
      levelCount: ctx.cfg.levels.length,
      done: n,
      total,
      elapsedS,
      etaS,
      durationS: plan.durationS,
      maxProbes: ctx.cfg.search?.max_probes ?? null,
      unit: ctx.cfg.mode === "open" ? "req/s" : ctx.cfg.agent_sessions ? "sessions" : "users",
    });
  };
}

/** Where a level runs: this runner's shard of it (SINGLE: the whole), its request ids, and when it starts. */
export interface LevelPlace {
  runner: Shard;
  /** Threads of a pool number a level from its base; one thread alone continues the run's count. */
  ids: IdScheme;
  calibration: PromptCalibration | null;
  dataset?: Dataset | null;
  /** Epoch ms at which the level starts on every runner (`--start-at`), or null: when ready. */
  startEpochMs: number | null;
}

/**
 * One level, the one way: its placements (shard.ts) on the pool's threads, or this runner's whole
 * share on the main thread (the unsplit level is the placement SINGLE of SINGLE). Warmup, the
 * self-check, the /metrics sampler and progress around it; the threads' runs merged into one.
 */
export async function runLevel(
  ctx: LevelRunContext,
  plan: LevelPlan,
  where: LevelPlace,
): Promise<MeasuredLevel> {
  const { cfg, sampler } = ctx;
  const runnerShare = shareOf(plan.level, { runner: where.runner, thread: SINGLE });
  const threads = ctx.pool
    ? cfg.mode === "closed"
      ? Math.max(1, Math.min(ctx.pool.size, runnerShare))
      : ctx.pool.size
    : 1;
  const jobs: ShareJob[] = Array.from({ length: threads }, (_, k) => ({
    cfg,
    plan,
    placement: { runner: where.runner, thread: { index: k, count: threads } },
    ids: where.ids,
    calibration: where.calibration,
    dataset: where.dataset ?? null,
  }));
  const processCheck = new SelfCheck();
  let localDone = 0;
  const report = progressReporter(ctx, plan, () => (ctx.pool ? ctx.pool.done : localDone));
  const progressTimer = setInterval(report, 1000);
  const begin = () => {
    sampler?.start();
    processCheck.start();
  };
  let results: ThreadResult[];
  let startLateMs: number | null = null;
  try {
    if (ctx.pool) {
      ({ results, startLateMs } = await ctx.pool.runLevel(jobs, where.startEpochMs, begin, ctx.stop));
    } else {
      const warmup = await runShareWarmup(ctx.client, jobs[0]!);
      const slot = slotStart(where.startEpochMs);
      const startEpochMs = slot.startEpochMs;
      startLateMs = slot.lateMs;
      await sleepUntil(startEpochMs - performance.timeOrigin, ctx.stop);
      begin();
      const check = new SelfCheck();
      check.start();
      const run = await runShare(ctx.client, jobs[0]!, {
        startAtAbsMs: startEpochMs - performance.timeOrigin,
        ...(ctx.stop ? { stop: ctx.stop } : {}),
        onRecord: () => {
          localDone++;
        },
      });
      results = [{ warmup, run, check: check.stop(sendQueueOf(run.records), run.records) }];
    }
  } finally {
    clearInterval(progressTimer);
  }
  const run = mergeRuns(results.map((r) => r.run));
  const processWide = processCheck.stop(sendQueueOf(run.records), run.records);
  await sampler?.stop();
  report();
  return {
    startLateMs,
    warmup: results.flatMap((r) => r.warmup).sort((a, b) => a.id - b.id),
    run,
    client: ctx.pool
      ? mergeChecks(
          results.map((r) => ({ check: r.check, requests: r.run.records.length })),
          processWide,
        )
      : results[0]!.check,
  };
}

/** Several placements' runs of one level as one: the union of the records (by id). */
export function mergeRuns(runs: LevelRun[]): LevelRun {
  const records = runs.flatMap((r) => r.records).sort((a, b) => a.id - b.id);
  const intended = runs.map((r) => r.lastIntendedMs).filter((x): x is number => x !== undefined);
  let drainTimeS: number | null = null;
  if (intended.length > 0) {
    const lastIntended = maxOf(intended);
    let lastEnd = Number.NEGATIVE_INFINITY;
    for (const r of records) if (r.end_ms !== null && r.end_ms > lastEnd) lastEnd = r.end_ms;
    drainTimeS = Number.isFinite(lastEnd) ? Math.max(0, lastEnd - lastIntended) / 1000 : null;
  }
  return {
    records,
    droppedArrivals: runs.reduce((a, r) => a + r.droppedArrivals, 0),
    drainTimeS,
    ...(intended.length > 0 ? { lastIntendedMs: maxOf(intended) } : {}),
  };
}
