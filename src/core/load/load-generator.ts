/**
 * Who generates the load: the resolved `--workers`, `--shard`, `--start-at` and `--level-slot-s`,
 * checked together, and what the document records of them.
 */
import { availableParallelism } from "node:os";
import { UsageError } from "../../schema/errors.ts";
import type { ResultDocument, SweepConfig } from "../../schema/v1.ts";
import type { Target } from "../server/target.ts";
import type { Values } from "../settings/setting.ts";
import type { LOAD } from "../settings/table.ts";
import { newRunSalt } from "../workload/prompts.ts";
import { parseShard, type Shard } from "./shard.ts";

export interface LoadGenerator {
  workers: number;
  shard: Shard | null;
  startAtEpochMs: number | null;
  /** With --shard: level i starts at startAtEpochMs + i x levelSlotMs. */
  levelSlotMs: number;
}

export const ONE_THREAD: LoadGenerator = { workers: 1, shard: null, startAtEpochMs: null, levelSlotMs: 0 };

/**
 * The run's prompt salt (prompts.ts): random, except across runner shards, which must build the
 * same shared prefixes: they take it from their common `--start-at`, which differs per run.
 */
export function runSaltOf(load: LoadGenerator): number {
  return load.startAtEpochMs !== null ? load.startAtEpochMs % 1_000_000 : newRunSalt();
}

/**
 * The automatic number of worker threads: the cores there are, less what the server under test
 * needs when it runs on this machine (half the cores, at least 2), less one for the main thread;
 * at least 1, at most 16.
 */
export function autoWorkers(serverIsLocal: boolean, cores = availableParallelism()): number {
  const reserve = serverIsLocal ? Math.max(2, Math.ceil(cores / 2)) : 0;
  return Math.max(1, Math.min(16, cores - reserve - 1));
}

const LOCAL = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|::1|0\.0\.0\.0)$/i;
export const serverIsLocal = (t: Target): boolean => LOCAL.test(new URL(t.origin).hostname);

export function loadGeneratorOf(v: Values<typeof LOAD>, cfg: SweepConfig, target: Target): LoadGenerator {
  const workers = v.workers === "auto" ? autoWorkers(serverIsLocal(target)) : v.workers;
  if (v.shard === null) {
    if (v.startAt !== null || v.levelSlotS !== null)
      throw new UsageError("--start-at and --level-slot-s go with --shard i/n", "--start-at");
    return { ...ONE_THREAD, workers };
  }
  const shard = parseShard(v.shard);
  if (v.startAt === null)
    throw new UsageError(
      "--shard needs --start-at EPOCH_MS, the same on every runner, so their levels start together (e.g. $(( $(date +%s) * 1000 + 60000 )) computed once and passed to all)",
      "--start-at",
    );
  let slotS = v.levelSlotS;
  if (slotS === null) {
    if (cfg.levels.length > 1 && cfg.duration_s === null)
      throw new UsageError(
        "--shard with several levels needs --duration (levels of fixed length) or --level-slot-s (how long each level's slot is), so every runner starts each level at the same time",
        "--level-slot-s",
      );
    slotS = (cfg.duration_s ?? 0) + 15;
  }
  return { workers, shard, startAtEpochMs: v.startAt, levelSlotMs: slotS * 1000 };
}

/** When level `index` starts on every runner, or null when it starts as soon as it can. */
export function levelStartEpochMs(g: LoadGenerator, index: number): number | null {
  return g.startAtEpochMs === null ? null : g.startAtEpochMs + index * g.levelSlotMs;
}

/**
 * What a shard says when level `index` began `lateMs` past its slot: how late, and the margin that
 * would have been enough (a later --start-at for the first level; a longer --level-slot-s when
 * the level before ran past its slot). Null when it started on time.
 */
export function lateStartNotice(
  g: LoadGenerator,
  index: number,
  level: number,
  lateMs: number | null,
): string | null {
  // a timer fires a few ms late on a busy machine; that is not a missed slot
  if (lateMs === null || lateMs < 1 || g.startAtEpochMs === null) return null;
  const late = `level ${level}: this shard started ${lateMs.toFixed(0)} ms after its slot`;
  const merge =
    "the shards' requests of this level are that far apart in time, and merge refuses starts more than --clock-tolerance-ms apart";
  const spareS = Math.ceil(lateMs / 1000) + 1;
  if (index === 0)
    return `${late} (--start-at): setup, calibration and warm-up took longer; ${merge}. A --start-at at least ${spareS} s later would have been enough`;
  return `${late} (--start-at + ${index} x --level-slot-s): the level before ran past its slot; ${merge}. A --level-slot-s of at least ${Math.ceil(g.levelSlotMs / 1000 + lateMs / 1000 / index) + 1} s would have been enough`;
}

export function loadGeneratorRecord(g: LoadGenerator): ResultDocument["load_generator"] {
  if (g.workers === 1 && g.shard === null) return null;
  return {
    workers: g.workers,
    shard: g.shard === null ? null : `${g.shard.index + 1}/${g.shard.count}`,
    start_at_epoch_ms: g.startAtEpochMs,
  };
}
