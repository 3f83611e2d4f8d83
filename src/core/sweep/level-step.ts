/**
 * One level of a sweep, in one place: run it (load/level-run.ts), summarise it, its GPU energy,
 * the hooks around it, and its records tagged with their pass. Null when a stop interrupted it
 * (its records are not kept: `--resume` measures it again).
 */

import type { LevelResult, PromptCalibration, RequestRecord } from "../../schema/v1.ts";
import { runLevel } from "../load/level-run.ts";
import { type LoadGenerator, lateStartNotice, levelStartEpochMs } from "../load/load-generator.ts";
import { ID_STRIDE, SINGLE } from "../load/shard.ts";
import { probeBoundMs, ttftProbe } from "../load/ttft-probe.ts";
import { endpointFigures } from "../results/endpoints.ts";
import { summariseLevel } from "../results/level-summary.ts";
import { levelNotice } from "../results/notices.ts";
import { withGpuValidity, withLeakValidity } from "../results/validity.ts";
import { resetCache } from "../server/cache-reset.ts";
import { releaseCheck } from "../server/release-check.ts";
import type { Dataset } from "../workload/dataset.ts";
import type { Arm } from "./gear.ts";
import type { GpuRun } from "./gpu.ts";
import type { Step } from "./schedule.ts";

export interface LevelHooks {
  start(level: number, originMs: number): void;
  stop(
    level: LevelResult,
    records: readonly RequestRecord[],
  ): Promise<Partial<LevelResult>> | Partial<LevelResult>;
}

export interface StepContext {
  load: LoadGenerator;
  calibration: PromptCalibration | null;
  dataset: Dataset | null;
  gpu: GpuRun | null;
  hooks?: LevelHooks | undefined;
  originMs: number;
  /** The run's request count (one thread of one runner numbers requests in order). */
  ids: { next: number };
  /** Tag records with their pass: `repeat` (`--repeats`) or `block` (`--ab`). */
  tag: "repeat" | "block" | null;
  notice: (m: string) => void;
  stop?: AbortSignal | undefined;
}

export async function runStep(
  arm: Arm,
  step: Step,
  c: StepContext,
): Promise<{ level: LevelResult; records: RequestRecord[] } | null> {
  const { plan, slot } = step;
  const cfg = arm.ctx.cfg;
  for (const n of plan.notices) c.notice(n);
  // a cold cache before the level's warmup, on this arm's server
  const reset = cfg.cache_reset;
  if (reset?.mode === "level" && reset.method !== null) await resetCache(arm.pre.target, reset.method);
  // the server's TTFT idle, before the level whose streams are cancelled (compared after it)
  const probeBefore = cfg.cancel ? await ttftProbe(arm.ctx.client, plan.level, cfg.seed) : null;
  c.hooks?.start(plan.level, c.originMs);
  const placed = c.load.workers > 1 || c.load.shard !== null;
  const measured = await runLevel(arm.ctx, plan, {
    runner: c.load.shard ?? SINGLE,
    ids: placed ? { base: slot * ID_STRIDE } : c.ids,
    calibration: c.calibration,
    dataset: c.dataset,
    startEpochMs: levelStartEpochMs(c.load, slot),
  });
  if (c.stop?.aborted) {
    c.notice(`level ${plan.level} interrupted; not recorded (--resume measures it again)`);
    return null;
  }
  const late = lateStartNotice(c.load, plan.index, plan.level, measured.startLateMs ?? null);
  const { result, notices } = summariseLevel({
    cfg,
    level: plan.level,
    run: measured.run,
    warmupRequests: measured.warmup.length,
    client: measured.client,
    sampler: arm.ctx.sampler,
    limits: arm.limits,
    notices: late === null ? plan.notices : [...plan.notices, late],
    calibration: c.calibration,
    arrival: plan.arrival,
  });
  // the level's notices (the late start among them) as one line: each says "level N: ..."
  const own = notices.slice(plan.notices.length);
  const prefix = `level ${plan.level}: `;
  const parts = own.filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
  if (parts.length > 0) c.notice(levelNotice(plan.level, parts));
  for (const n of own) if (!n.startsWith(prefix)) c.notice(n);
  const level = c.hooks ? { ...result, ...(await c.hooks.stop(result, measured.run.records)) } : result;
  if (cfg.endpoints)
    level.endpoints = endpointFigures(
      cfg.endpoints,
      measured.run.records,
      level,
      arm.ctx.sampler?.perEndpoint ?? [],
    );
  if (c.gpu) {
    level.gpu = await c.gpu.figures(level);
    level.validity = withGpuValidity(level);
    const gpus = level.gpu.per_gpu.length;
    if (level.jobs && gpus > 0 && level.jobs.jobs_per_hour_per_user !== null)
      level.jobs.jobs_per_hour_per_gpu = (level.jobs.jobs_per_hour_per_user * level.level) / gpus;
  }
  if (level.cancelled) {
    // did the server free what the aborted streams held? (its slots or its running requests)
    level.cancelled.release = await releaseCheck(arm.pre.target);
    if (probeBefore) {
      const after = await ttftProbe(arm.ctx.client, plan.level, cfg.seed);
      level.cancelled.probe = {
        before_ms: probeBefore.median_ms,
        after_ms: after.median_ms,
        bound_ms: probeBoundMs(probeBefore, level.client.lateness_bound_ms ?? null),
      };
    }
    level.validity = withLeakValidity(level);
    const leak = level.validity.reasons.find((x) => x.code === "leak");
    if (leak) c.notice(`level ${plan.level}: ${leak.text}`);
  }
  const records = [...measured.warmup, ...measured.run.records];
  if (c.tag) for (const r of records) r[c.tag] = step.pass.index;
  return { level, records };
}
