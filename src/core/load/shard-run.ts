/**
 * One placement's part of a level (a worker thread's, or a runner's under `--shard`): its warmup,
 * then its users or arrivals from a common start time, on its own client. The records carry the
 * level-wide request ids (shard.ts), so merging placements is a union.
 */
import type { PromptCalibration, RequestRecord, SweepConfig } from "../../schema/v1.ts";
import type { StreamClient } from "../client/stream-client.ts";
import type { Dataset } from "../workload/dataset.ts";
import { parseToolWait } from "../workload/tool-waits.ts";
import { runAgentLoop } from "./agent-loop.ts";
import { type LevelPlan, sessionsOf } from "./level-plan.ts";
import { type LevelRun, runClosedLoop, runOpenLoop, runWarmup, type SpecFactory } from "./loops.ts";
import { type IdScheme, specFactory } from "./requests.ts";
import { closedIndex, type Placement, shareOf } from "./shard.ts";

export interface ShareJob {
  cfg: SweepConfig;
  plan: LevelPlan;
  placement: Placement;
  /** How its requests are numbered (worker threads: a level's base; the main thread alone: the run's count). */
  ids: IdScheme;
  calibration: PromptCalibration | null;
  dataset?: Dataset | null;
}

function factories(job: ShareJob): { all: SpecFactory; closed: SpecFactory } {
  // agent sessions warm up with synthetic prompts: a session is played by the agent loop only
  const prompts = job.dataset?.agents ? null : (job.dataset ?? null);
  const all = specFactory(job.cfg, job.plan, job.ids, job.calibration, prompts);
  return { all, closed: (j, w, t, turn) => all(closedIndex(j, job.placement), w, t, turn) };
}

export function runShareWarmup(client: StreamClient, job: ShareJob): Promise<RequestRecord[]> {
  const { cfg, plan, placement } = job;
  const users = cfg.mode === "closed" ? shareOf(plan.level, placement) : Math.ceil(plan.level);
  return runWarmup(
    client,
    factories(job).closed,
    shareOf(cfg.warmup_requests, placement),
    Math.max(1, users),
  );
}

export function runShare(
  client: StreamClient,
  job: ShareJob,
  o: { startAtAbsMs: number; stop?: AbortSignal; onRecord?: (r: RequestRecord) => void },
): Promise<LevelRun> {
  const { cfg, plan, placement } = job;
  const f = factories(job);
  const common = {
    durationS: plan.durationS,
    startAtAbsMs: o.startAtAbsMs,
    ...(cfg.ramp_up_s ? { rampUpS: cfg.ramp_up_s } : {}),
    ...(o.stop ? { stop: o.stop } : {}),
    ...(o.onRecord ? { onRecord: o.onRecord } : {}),
  };
  if (cfg.mode === "closed") {
    const users = shareOf(plan.level, placement);
    if (users === 0) return Promise.resolve({ records: [], droppedArrivals: 0, drainTimeS: null });
    const agents = job.dataset?.agents;
    if (agents)
      return runAgentLoop(
        client,
        {
          plan,
          ids: job.ids,
          calibration: job.calibration,
          placement,
          agents,
          toolWait: parseToolWait(cfg.agent_sessions?.tool_wait ?? "file"),
          seed: cfg.seed,
        },
        {
          ...common,
          requests: plan.requests === null ? null : shareOf(plan.requests, placement),
          concurrency: users,
        },
      );
    return runClosedLoop(client, f.closed, {
      ...common,
      requests: plan.requests === null ? null : shareOf(plan.requests, placement),
      concurrency: users,
      sessions: sessionsOf(cfg),
    });
  }
  return runOpenLoop(client, f.all, {
    ...common,
    requests: plan.requests, // the whole schedule's count: this placement sends its arrivals of it
    rateRps: plan.level,
    arrival: plan.arrival,
    burstiness: cfg.burstiness,
    seed: plan.seed,
    maxInFlight: cfg.max_in_flight === null ? null : Math.max(1, shareOf(cfg.max_in_flight, placement)),
    shard: placement,
    ...(job.dataset?.offsetsMs ? { offsetsMs: job.dataset.offsetsMs } : {}),
  });
}
