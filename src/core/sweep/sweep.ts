/**
 * A sweep, sequenced: check the combination, take the state (fresh or resumed), open the gear,
 * run the schedule's levels one by one (each checkpointed to disk before the next starts, so a
 * killed sweep loses at most the level in progress), close, and write the document. Each step is
 * its own module: run-state.ts, gear.ts, schedule.ts, level-step.ts.
 */
import type { LevelResult, ResultDocument, SweepConfig } from "../../schema/v1.ts";
import type { Progress } from "../load/level-run.ts";
import { type LoadGenerator, loadGeneratorRecord, ONE_THREAD, runSaltOf } from "../load/load-generator.ts";
import type { Provenance } from "../results/document.ts";
import type { RecordsMode } from "../results/files.ts";
import { splitNotice } from "../results/notices.ts";
import { checkConsistency } from "../server/consistency.ts";
import type { Preflight } from "../server/preflight.ts";
import type { Dataset } from "../workload/dataset.ts";
import { checkCombination } from "./combination.ts";
import { openGear } from "./gear.ts";
import { type LevelHooks, runStep } from "./level-step.ts";
import {
  checkpoint,
  type DocumentInputs,
  finalDocument,
  passLevels,
  recordLevel,
  startState,
} from "./run-state.ts";
import { passesOf, schedule, scheduleComplete, searchPlan, stepNotices } from "./schedule.ts";
import { saturationOf } from "./search.ts";

export type { Progress } from "../load/level-run.ts";
export { SweepError } from "./errors.ts";
export type { LevelHooks } from "./level-step.ts";

export interface SweepOptions {
  /** First contact's outcome: the server (model resolved), its snapshot and the prompt calibration. */
  pre: Preflight;
  /** What to send: levels, workload, SLOs, and the per-request settings (timeout, ignore_eos, extra body). */
  config: SweepConfig;
  out: string | null;
  records: RecordsMode;
  resume: boolean;
  provenance?: Provenance | null;
  /** `--server-command`: the server's start as measured (SweepSetup.startup). */
  startup?: ResultDocument["startup"];
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
  /** `--ab`: the base's server (its preflight) and the pairs of blocks to alternate with it. */
  ab?: { pre: Preflight; pairs: number } | null;
  /** `--consistency N`: the answers to N fixed prompts, fingerprinted before the first level. */
  consistency?: number;
  /** `--gpu-metrics-url` as given (the configuration holds its public form). */
  gpuMetricsUrl?: string | null;
}

export async function runSweep(opts: SweepOptions): Promise<ResultDocument> {
  checkCombination(opts.config, opts.load ?? ONE_THREAD, { resume: opts.resume, ab: !!opts.ab });
  const { cfg, probes } = searchPlan(opts.config);
  const notice = opts.onNotice ?? (() => {});
  const state = startState({ out: opts.out, resume: opts.resume, config: cfg }, notice);
  const load = opts.load ?? ONE_THREAD;
  const ab = opts.ab ? { pairs: opts.ab.pairs, seed: cfg.seed } : null;
  const passes = passesOf(cfg, ab);
  const done = (p: (typeof passes)[number]) => passLevels(state, p);
  const gear = await openGear({
    cfg,
    head: opts.pre,
    base: opts.ab?.pre ?? null,
    load,
    origin: { originMs: state.originMs, originWallMs: state.originWall },
    notice,
    onProgress: opts.onProgress,
    stop: opts.stop,
    offsetsMs: opts.dataset?.offsetsMs ?? null,
    gpuMetricsUrl: opts.gpuMetricsUrl ?? null,
  });
  const consistency = opts.consistency ? await checkConsistency(opts.pre.target, opts.consistency) : null;
  const d: DocumentInputs = {
    pre: opts.pre,
    consistency,
    config: cfg,
    environment: gear.environment,
    provenance: opts.provenance ?? null,
    startup: opts.startup ?? null,
    loadGenerator: loadGeneratorRecord(load),
    saturation: () => (cfg.search ? saturationOf(done(passes[0]!), cfg.search) : undefined),
    gpuTelemetry: () => gear.gpu?.record(),
    abBase: opts.ab
      ? { base_url: opts.ab.pre.target.baseUrl, model: opts.ab.pre.target.model, seed: cfg.seed }
      : null,
  };
  const out = { path: opts.out, records: opts.records };
  let said = { evenNoted: false };
  try {
    for (const step of schedule(cfg, passes, done, opts.salt ?? runSaltOf(load), probes)) {
      if (opts.stop?.aborted) break;
      const fresh = done(step.pass).length === 0;
      said = stepNotices(
        step,
        { passes: passes.length, ab: !!ab, fresh, arrival: cfg.arrival, ...said },
        notice,
      );
      const ran = await runStep(step.pass.arm === "base" ? gear.base! : gear.head, step, {
        load,
        calibration: opts.pre.calibration,
        dataset: opts.dataset ?? null,
        gpu: gear.gpu,
        hooks: opts.levelHooks,
        originMs: state.originMs,
        ids: state.ids,
        tag: ab ? "block" : passes.length > 1 ? "repeat" : null,
        notice,
        stop: opts.stop,
      });
      if (ran === null) break;
      recordLevel(state, step.pass, ran, cfg.levels);
      checkpoint(state, d, out, false);
      opts.onLevel?.(ran.level);
    }
  } finally {
    await gear.close();
  }
  const lacked = splitNotice(done(passes[0]!), cfg.metrics_interval_ms !== null);
  if (lacked !== null) notice(lacked);
  return finalDocument(state, d, out, scheduleComplete(cfg, passes, done, probes));
}
