/**
 * Planning a level: how many requests it measures, its seed and salt, and why the plan differs
 * from what was asked. Its requests are built in requests.ts.
 */
import type { SweepConfig } from "../../schema/v1.ts";
import { ID_STRIDE } from "./shard.ts";

/** Measured requests per level by default: enough for a p95 (59 samples at least, results/validity.ts). */
export const DEFAULT_REQUESTS = 64;

/**
 * Closed loop: each user sends at least twice (a count the user gave), or by default 4 times. The
 * steady window runs from the last user's first send to the first user's last end, about (k − 1)
 * request lifetimes for k requests per user: with fewer than 4 it is under the two lifetimes (and
 * half the level) a steady window needs (results/steady.ts), so the default sizes for it.
 */
export const MIN_REQUESTS_PER_USER = 2;
export const DEFAULT_REQUESTS_PER_USER = 4;

/**
 * The requests of a closed level the steady window leaves out: about one per user at each end
 * (every user's first send but the last one's before it starts, every user's last request still
 * running when the first user stops). The default adds them, so that its 64 land inside the
 * window, where a p95 is taken from (59 needed).
 */
export const WINDOW_EDGE_PER_USER = 2;

/** A level's measured requests from the run's configuration (null: it runs for a duration). */
export function effectiveRequests(
  cfg: Pick<SweepConfig, "mode" | "requests_per_level" | "requests_default">,
  level: number,
): number | null {
  const requests = cfg.requests_per_level;
  if (requests === null) return null;
  if (cfg.mode !== "closed") return requests;
  if (cfg.requests_default !== true) return Math.max(requests, MIN_REQUESTS_PER_USER * level);
  return Math.max(requests + WINDOW_EDGE_PER_USER * level, DEFAULT_REQUESTS_PER_USER * level);
}

/** `--turns`: the closed loop's conversations, or null. */
export function sessionsOf(cfg: SweepConfig): { turns: number; thinkTimeMs: number } | null {
  return cfg.sessions ? { turns: cfg.sessions.turns, thinkTimeMs: cfg.sessions.think_time_ms } : null;
}

/**
 * `--mode search`: a probe runs at least this long at its rate, seconds: long enough for a queue
 * to form and show (a server that keeps up for 32 requests at 1,000 req/s has not been tested),
 * and for its steady window to span whole request lifetimes.
 */
export const MIN_PROBE_S = 4;

export interface LevelPlan {
  level: number;
  index: number;
  /** Measured requests (null: run for the duration). */
  requests: number | null;
  /** How long the level runs (null: until its requests are done). */
  durationS: number | null;
  /** Open loop: the arrival process (a search bisects its bracket with constant arrivals). */
  arrival: SweepConfig["arrival"];
  seed: number;
  /** The run's salt (prompts.ts): in every unique tag and shared prefix, so no run sees another's. */
  salt: number;
  /** Why the plan differs from what was asked, for the level's notices. */
  notices: string[];
  /**
   * A dataset's draws before this level: the levels before it consumed that many of its entries
   * (levels that run for a duration have no count: after one, every draw is a reuse).
   */
  datasetStart: number;
}

/** How many dataset entries the levels before `index` drew. */
function datasetStartOf(cfg: SweepConfig, index: number): number {
  let start = 0;
  for (let k = 0; k < index; k++) {
    const r = effectiveRequests(cfg, cfg.levels[k]!);
    if (r === null) return index * ID_STRIDE;
    start += r;
  }
  return start;
}

/**
 * Level `index` of repeat `repeat` (`--repeats`): a repeat sends the same levels with the same
 * seeds (lengths and arrivals as a separate run would have them), and draws a dataset on from
 * where the repeat before it stopped, so no repeat re-sends another's prompts.
 */
export function planLevel(cfg: SweepConfig, index: number, salt = 0, repeat = 0): LevelPlan {
  const level = cfg.levels[index]!;
  let requests = effectiveRequests(cfg, level);
  let durationS = cfg.duration_s;
  const notices: string[] = [];
  if (cfg.search) {
    // A probe is sized from its rate, whatever --requests says.
    if (durationS !== null) durationS = Math.max(durationS, MIN_PROBE_S);
    if (requests !== null) requests = Math.max(requests, Math.ceil(level * MIN_PROBE_S));
  }
  // (said only for a count the user gave: raising the default is the default's own rule)
  if (cfg.mode === "closed" && requests !== null && cfg.requests_per_level !== null) {
    if (requests > cfg.requests_per_level && cfg.requests_default !== true)
      notices.push(
        `level ${level}: raised --requests from ${cfg.requests_per_level} to ${requests} (at least 2x the ${level} users, so every user sends at least twice)`,
      );
  }
  return {
    level,
    index,
    requests,
    durationS,
    arrival: cfg.arrival,
    seed: (cfg.seed + 7919 * (index + 1)) >>> 0,
    salt,
    notices,
    datasetStart: datasetStartOf(cfg, index) + repeat * datasetStartOf(cfg, cfg.levels.length),
  };
}
