/**
 * A sweep's state, in one place: fresh, or the killed sweep in `--out` (same configuration only),
 * the levels of each pass (a repeat, or an A/B block) as they finish, the records, and the
 * document they make at any moment (a checkpoint after every level, the whole at the end).
 */
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { UsageError } from "../../schema/errors.ts";
import type { LevelResult, RequestRecord, ResultDocument, SweepConfig } from "../../schema/v1.ts";
import { medianLevels } from "../../shared/repeats.ts";
import { buildDocument, type Provenance } from "../results/document.ts";
import { outputPaths, type RecordsMode, readResults, writeResults } from "../results/files.ts";
import { FORMULAS } from "../results/metrics.ts";
import type { Preflight } from "../server/preflight.ts";
import { sameConfig } from "./config.ts";
import { SweepError } from "./errors.ts";
import type { Pass } from "./schedule.ts";

export interface SweepState {
  /** Every pass's levels, in the order the passes ran (one pass without --repeats or --ab). */
  passes: { pass: Pass; levels: LevelResult[] }[];
  records: RequestRecord[];
  createdAt: string;
  originWall: number;
  originMs: number;
  /** The run's request count, where one thread of one runner numbers them. */
  ids: { next: number };
}

/** A fresh state, or the state of the killed sweep in `out` (same configuration only). */
export function startState(
  o: { out: string | null; resume: boolean; config: SweepConfig },
  notice: (m: string) => void,
): SweepState {
  const fresh: SweepState = {
    passes: [],
    records: [],
    createdAt: new Date().toISOString(),
    originWall: Date.now(),
    originMs: performance.now(),
    ids: { next: 0 },
  };
  if (!o.resume) return fresh;
  if (o.out === null) throw new UsageError("--resume needs --out", "--resume");
  if (!existsSync(o.out)) return fresh;
  const { doc: prev, records, unlisted } = readResults(o.out);
  if (prev.kind !== "sweep" || prev.config === null || !sameConfig(prev.config, o.config)) {
    throw new SweepError(
      "resume_mismatch",
      `${o.out} was written with a different configuration; refusing to mix`,
    );
  }
  const originWall = Date.parse(prev.clock.origin_wall_time);
  notice(
    `resuming ${o.out}: ${prev.levels.length} of ${o.config.levels.length} levels already done${unlisted > 0 ? `; ${unlisted} records of the level in progress at the kill are dropped (it is measured again)` : ""}`,
  );
  return {
    passes: [{ pass: { index: 0, arm: "head", pair: null }, levels: prev.levels }],
    // Only the records of finished levels (readResults leaves out the level in progress at the kill).
    records,
    createdAt: prev.created_at,
    originWall,
    // Same timeline as the first part: map the old origin onto this process's monotonic clock.
    originMs: performance.now() - (Date.now() - originWall),
    ids: { next: records.reduce((m, r) => Math.max(m, r.id + 1), 0) },
  };
}

/** The levels a pass holds so far (made on first use). */
export function passLevels(state: SweepState, pass: Pass): LevelResult[] {
  let p = state.passes.find((x) => x.pass.index === pass.index);
  if (!p) {
    p = { pass, levels: [] };
    state.passes.push(p);
  }
  return p.levels;
}

/** A finished level into its pass, in the order of the config's levels, with its records. */
export function recordLevel(
  state: SweepState,
  pass: Pass,
  ran: { level: LevelResult; records: readonly RequestRecord[] },
  order: readonly number[],
): void {
  state.records.push(...ran.records);
  const levels = passLevels(state, pass);
  levels.push(ran.level);
  levels.sort((a, b) => order.indexOf(a.level) - order.indexOf(b.level));
}

export interface DocumentInputs {
  pre: Preflight;
  config: SweepConfig;
  environment: ResultDocument["environment"];
  provenance: Provenance | null;
  startup: ResultDocument["startup"];
  loadGenerator: ResultDocument["load_generator"];
  saturation: () => ResultDocument["saturation"] | undefined;
  gpuTelemetry: () => ResultDocument["gpu_telemetry"] | undefined;
  /** `--ab`: the base's server. */
  abBase: { base_url: string; model: string; seed: number } | null;
  /** `--consistency N`: the answers to its fixed prompts. */
  consistency: ResultDocument["consistency"] | null;
}

/** The document of the state as it stands: the head's levels (each figure's median over its passes). */
export function stateDocument(
  state: SweepState,
  d: DocumentInputs,
  complete: boolean,
  requests: RequestRecord[] | null,
): ResultDocument {
  const head = state.passes.filter((p) => p.pass.arm === "head" && p.levels.length > 0);
  const many = head.length > 1;
  const repeats = d.abBase === null && (d.config.repeats ?? 1) > 1;
  return buildDocument({
    kind: "sweep",
    createdAt: state.createdAt,
    originWallMs: state.originWall,
    target: d.pre.target,
    environment: d.environment,
    formulas: FORMULAS,
    config: d.config,
    levels: many ? medianLevels(head.map((p) => p.levels)) : (head[0]?.levels ?? []),
    ...(repeats ? { repeats: head.map((p, index) => ({ index, levels: p.levels })) } : {}),
    server: d.pre.server,
    requests,
    complete,
    provenance: d.provenance,
    ...(d.startup ? { startup: d.startup } : {}),
    promptCalibration: d.pre.calibration,
    loadGenerator: d.loadGenerator,
    ...(d.saturation() ? { saturation: d.saturation()! } : {}),
    ...(d.gpuTelemetry() ? { gpuTelemetry: d.gpuTelemetry()! } : {}),
    ...(d.abBase ? { ab: abRecord(state, d.abBase) } : {}),
    ...(d.consistency ? { consistency: d.consistency } : {}),
  });
}

function abRecord(
  state: SweepState,
  base: NonNullable<DocumentInputs["abBase"]>,
): NonNullable<ResultDocument["ab"]> {
  const blocks = state.passes
    .filter((p) => p.levels.length > 0)
    .map((p) => ({ index: p.pass.index, arm: p.pass.arm, pair: p.pass.pair ?? 0, levels: p.levels }));
  const pairs: { base: number; head: number }[] = [];
  for (const b of blocks) {
    if (b.arm !== "head") continue;
    const mate = blocks.find((x) => x.pair === b.pair && x.arm === "base");
    if (mate) pairs.push({ base: mate.index, head: b.index });
  }
  return { base_target: { base_url: base.base_url, model: base.model }, seed: base.seed, blocks, pairs };
}

/** Write the state's document (no records inline: those go beside it, or inline at the end). */
export function checkpoint(
  state: SweepState,
  d: DocumentInputs,
  out: { path: string | null; records: RecordsMode },
  complete: boolean,
): void {
  if (out.path !== null)
    writeResults(stateDocument(state, d, complete, null), out.path, state.records, out.records);
}

/** The final document: written once more, and returned with its records as asked. */
export function finalDocument(
  state: SweepState,
  d: DocumentInputs,
  out: { path: string | null; records: RecordsMode },
  complete: boolean,
): ResultDocument {
  checkpoint(state, d, out, complete);
  const doc = stateDocument(state, d, complete, out.records === "inline" ? state.records : null);
  if (out.records === "file" && out.path) doc.requests_file = outputPaths(out.path).requestsFile;
  return doc;
}
