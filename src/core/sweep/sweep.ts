/**
 * A sweep: plan each level, run it, summarise it, write the document. Levels run one after
 * another, each checkpointed to disk before the next starts, so a killed sweep loses at most
 * the level in progress (`--resume` finishes it without redoing finished levels).
 */
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { TokenbenchError } from "../../schema/errors.ts";
import type { LevelResult, RequestRecord, ResultDocument, SweepConfig } from "../../schema/v1.ts";
import { medianLevels } from "../../shared/repeats.ts";
import { warmUpClientPath } from "../client/jit-warmup.ts";
import { clientOptionsOf, StreamClient } from "../client/stream-client.ts";
import { planLevel } from "../load/level-plan.ts";
import { type LevelRunContext, type Progress, runLevel, runShardedLevel } from "../load/level-run.ts";
import { summariseLevel } from "../load/level-summary.ts";
import {
  type LoadGenerator,
  lateStartNotice,
  levelStartEpochMs,
  loadGeneratorRecord,
  ONE_THREAD,
  runSaltOf,
} from "../load/load-generator.ts";
import { specFactory } from "../load/requests.ts";
import { ID_STRIDE, SINGLE } from "../load/shard.ts";
import { WorkerPool } from "../load/worker-pool.ts";
import { buildDocument, type Provenance } from "../results/document.ts";
import { captureEnvironment } from "../results/environment.ts";
import { outputPaths, type RecordsMode, readResults, writeResults } from "../results/files.ts";
import { FORMULAS } from "../results/metrics.ts";
import { MetricsSampler } from "../server/metrics-sampler.ts";
import type { Preflight } from "../server/preflight.ts";
import { limitNumber } from "../server/snapshot.ts";
import type { Dataset } from "../workload/dataset.ts";
import { sameConfig } from "./config.ts";
import { openGpu } from "./gpu.ts";
import { bracketOf, nextProbe, probeOf, saturationOf } from "./search.ts";

export type { Progress } from "../load/level-run.ts";

export interface SweepOptions {
  /** First contact's outcome: the server (model resolved), its snapshot and the prompt calibration. */
  pre: Preflight;
  /** What to send: levels, workload, SLOs, and the per-request settings (timeout, ignore_eos, extra body). */
  config: SweepConfig;
  out: string | null;
  records: RecordsMode;
  resume: boolean;
  provenance?: Provenance | null;
  onNotice?: (msg: string) => void;
  onProgress?: (p: Progress) => void;
  onLevel?: (l: LevelResult) => void;
  /** Extra work around each level (tests, embedding). */
  levelHooks?: LevelHooks;
  /** Aborted on SIGINT/SIGTERM: the level in progress ends at once (its waits and requests), finished levels are kept. */
  stop?: AbortSignal;
  /** Worker threads and this runner's shard (default: the main thread alone, the whole level). */
  load?: LoadGenerator;
  /** `--dataset` or `--trace`: the prompts (config.dataset / config.trace records which). */
  dataset?: Dataset | null;
  /** The run's salt for unique tags and shared text (default: runSaltOf(load)); a trace's dataset was built with it. */
  salt?: number;
}

export interface LevelHooks {
  start(level: number, originMs: number): void;
  stop(
    level: LevelResult,
    records: readonly RequestRecord[],
  ): Promise<Partial<LevelResult>> | Partial<LevelResult>;
}

export class SweepError extends TokenbenchError {}

interface SweepState {
  /** The levels of the repeat in progress (the only one without --repeats). */
  levels: LevelResult[];
  /** Finished repeats' levels (--repeats), in the order run. */
  repeats: LevelResult[][];
  records: RequestRecord[];
  createdAt: string;
  originWall: number;
  originMs: number;
}

/** A fresh state, or the state of the killed sweep in `out` (same configuration only). */
function startState(opts: SweepOptions, notice: (m: string) => void): SweepState {
  const fresh = {
    levels: [],
    repeats: [],
    records: [],
    createdAt: new Date().toISOString(),
    originWall: Date.now(),
    originMs: performance.now(),
  };
  if (!opts.resume) return fresh;
  if (opts.out === null) throw new SweepError("usage", "--resume needs --out");
  if (!existsSync(opts.out)) return fresh;
  const { doc: prev, records, unlisted } = readResults(opts.out);
  if (prev.kind !== "sweep" || prev.config === null || !sameConfig(prev.config, opts.config)) {
    throw new SweepError(
      "resume_mismatch",
      `${opts.out} was written with a different configuration; refusing to mix`,
    );
  }
  const originWall = Date.parse(prev.clock.origin_wall_time);
  notice(
    `resuming ${opts.out}: ${prev.levels.length} of ${opts.config.levels.length} levels already done${unlisted > 0 ? `; ${unlisted} records of the level in progress at the kill are dropped (it is measured again)` : ""}`,
  );
  return {
    levels: prev.levels,
    repeats: [],
    // Only the records of finished levels (readResults leaves out the level in progress at the kill).
    records,
    createdAt: prev.created_at,
    originWall,
    // Same timeline as the first part: map the old origin onto this process's monotonic clock.
    originMs: performance.now() - (Date.now() - originWall),
  };
}

export async function runSweep(opts: SweepOptions): Promise<ResultDocument> {
  // A search decides its levels as it goes: its config's levels are the probes so far.
  const search = opts.config.search ?? null;
  const cfg: SweepConfig = search ? { ...opts.config, levels: [] } : opts.config;
  const probeOptions = search
    ? {
        start: opts.config.levels[0] ?? 1,
        targetPassPct: search.target_pass_pct,
        maxProbes: search.max_probes,
      }
    : null;
  const probes = () => state.levels.map(probeOf);
  const notice = opts.onNotice ?? (() => {});
  const state = startState(opts, notice);
  const { target, server, calibration } = opts.pre;
  const client = new StreamClient({ target, ...clientOptionsOf(cfg), originMs: state.originMs });
  const environment = await captureEnvironment();
  // GPU telemetry first: its idle window comes before any load (a notice and nothing else without a GPU tool).
  const gpu = await openGpu(cfg, { originMs: state.originMs, originWallMs: state.originWall }, notice);
  const sampler =
    cfg.metrics_interval_ms !== null
      ? new MetricsSampler(target, cfg.metrics_interval_ms, state.originMs)
      : null;
  const limits = {
    maxRunningRequests: limitNumber(server.limits, "max_running_requests"),
    cudaGraphMaxBs: limitNumber(server.limits, "cuda_graph_max_bs"),
  };
  const load = opts.load ?? ONE_THREAD;
  const salt = opts.salt ?? runSaltOf(load);
  const repeats = cfg.repeats ?? 1;
  if (repeats > 1 && opts.resume)
    throw new SweepError("usage", "--resume cannot finish a sweep with --repeats: run it again whole");
  if (repeats > 1 && load.shard !== null)
    throw new SweepError(
      "usage",
      "--repeats with --shard: the runners' start slots are per level; run the repeats as separate jobs",
    );
  const allRepeats = () => [...state.repeats, state.levels].filter((r) => r.length > 0);
  const doc = (complete: boolean, requests: RequestRecord[] | null): ResultDocument =>
    buildDocument({
      kind: "sweep",
      createdAt: state.createdAt,
      originWallMs: state.originWall,
      target,
      environment,
      formulas: FORMULAS,
      config: cfg,
      levels: repeats > 1 ? medianLevels(allRepeats()) : state.levels,
      ...(repeats > 1 ? { repeats: allRepeats().map((levels, index) => ({ index, levels })) } : {}),
      server,
      requests,
      complete,
      provenance: opts.provenance ?? null,
      promptCalibration: calibration,
      loadGenerator: loadGeneratorRecord(load),
      ...(search ? { saturation: saturationOf(state.levels, search) } : {}),
      ...(gpu ? { gpuTelemetry: gpu.record() } : {}),
    });
  const checkpoint = (complete: boolean) => {
    if (opts.out !== null) writeResults(doc(complete, null), opts.out, state.records, opts.records);
  };
  const sharded = load.workers > 1 || load.shard !== null;
  const pool =
    load.workers > 1
      ? new WorkerPool(load.workers, {
          target,
          ...clientOptionsOf(cfg),
          originEpochMs: performance.timeOrigin + state.originMs,
        })
      : null;
  // Compile the client's hot path first (jit-warmup.ts): the threads of a pool do their own.
  if (pool === null) await warmUpClientPath(client.cfg);
  const ctx: LevelRunContext = {
    cfg,
    client,
    sampler,
    onProgress: opts.onProgress,
    stop: opts.stop,
    pool,
    offsetsMs: opts.dataset?.offsetsMs ?? null,
  };
  const ids = { next: state.records.reduce((m, r) => Math.max(m, r.id + 1), 0) };
  // A stop (SIGINT/SIGTERM) ends the requests in flight at once instead of waiting for them.
  const onStop = () => {
    client.destroy().catch(() => {});
    pool?.stop();
  };
  opts.stop?.addEventListener("abort", onStop, { once: true });
  let evenNoted = false;
  try {
    for (let rep = 0; rep < repeats && !opts.stop?.aborted; rep++) {
      if (rep > 0) {
        state.repeats.push(state.levels);
        state.levels = [];
        notice(`repeat ${rep + 1} of ${repeats}: the same levels again, with fresh prompts`);
      }
      for (let li = 0; ; li++) {
        if (probeOptions) {
          const next = nextProbe(probes(), probeOptions);
          if (next === null) break;
          cfg.levels.push(Number(next.toPrecision(6)));
        } else if (li >= cfg.levels.length) break;
        const plan = planLevel(cfg, li, salt, rep);
        // Threads number their requests and runners start by slot: one slot per level of each repeat.
        const slot = rep * cfg.levels.length + li;
        if (
          probeOptions &&
          cfg.arrival !== "constant" &&
          bracketOf(probes(), probeOptions.targetPassPct).hi !== null
        ) {
          // Inside the bracket the rates differ by a few %: a Poisson probe's own count noise
          // (1/sqrt(arrivals), 8 % at 150) is wider than that, so these probes arrive evenly.
          plan.arrival = "constant";
          if (!evenNoted) {
            evenNoted = true;
            notice(
              `search: probes inside the bracket arrive at constant intervals (${cfg.arrival} arrivals' own noise is wider than the 3 % the bracket is narrowed to)`,
            );
          }
        }
        if (state.levels.some((l) => l.level === plan.level)) continue;
        if (opts.stop?.aborted) break;
        for (const n of plan.notices) notice(n);
        opts.levelHooks?.start(plan.level, state.originMs);
        const measured = sharded
          ? await runShardedLevel(ctx, plan, {
              runner: load.shard ?? SINGLE,
              idBase: slot * ID_STRIDE,
              calibration,
              dataset: opts.dataset ?? null,
              startEpochMs: levelStartEpochMs(load, slot),
            })
          : await runLevel(ctx, plan, specFactory(cfg, plan, ids, calibration, opts.dataset ?? null));
        if (opts.stop?.aborted) {
          notice(`level ${plan.level} interrupted; not recorded (--resume measures it again)`);
          break;
        }
        const late = lateStartNotice(load, plan.index, plan.level, measured.startLateMs ?? null);
        const { result, notices } = summariseLevel({
          cfg,
          level: plan.level,
          run: measured.run,
          warmupRequests: measured.warmup.length,
          client: measured.client,
          sampler,
          limits,
          notices: late === null ? plan.notices : [...plan.notices, late],
          calibration,
          arrival: plan.arrival,
        });
        for (const n of notices.slice(plan.notices.length)) notice(n); // the late start among them
        const final = opts.levelHooks
          ? { ...result, ...(await opts.levelHooks.stop(result, measured.run.records)) }
          : result;
        if (gpu) final.gpu = await gpu.figures(final);
        if (repeats > 1) for (const r of [...measured.warmup, ...measured.run.records]) r.repeat = rep;
        state.records.push(...measured.warmup, ...measured.run.records);
        state.levels.push(final);
        state.levels.sort((a, b) => cfg.levels.indexOf(a.level) - cfg.levels.indexOf(b.level));
        checkpoint(false);
        opts.onLevel?.(final);
      }
    }
  } finally {
    opts.stop?.removeEventListener("abort", onStop);
    await client.close().catch(() => {});
    await gpu?.stop();
    await pool?.close();
  }
  const complete = probeOptions
    ? nextProbe(probes(), probeOptions) === null
    : allRepeats().length === repeats &&
      allRepeats().every((r) => cfg.levels.every((l) => r.some((x) => x.level === l)));
  checkpoint(complete);
  const final = doc(complete, opts.records === "inline" ? state.records : null);
  if (opts.records === "file" && opts.out) final.requests_file = outputPaths(opts.out).requestsFile;
  return final;
}
