/**
 * Which level a sweep runs next, in one place: the passes (one; `--repeats N` of the same levels;
 * `--ab`: pairs of blocks, base's server and head's in a seeded order per pair), each pass's levels
 * in order, or a search's next probe from the probes so far. Pure but for the probes it reads.
 */
import type { LevelResult, SweepConfig } from "../../schema/v1.ts";
import { rng } from "../../shared/random.ts";
import { type LevelPlan, planLevel } from "../load/level-plan.ts";
import { nextSessions, type Tier, tierProbe } from "./agent-capacity.ts";
import { bracketOf, nextProbe, probeOf } from "./search.ts";

/** One pass over the levels: a repeat, or an A/B block of one arm (`pair`: its pair, null without --ab). */
export interface Pass {
  index: number;
  arm: "base" | "head";
  pair: number | null;
}

/** The passes of a sweep: one, `repeats` of the head's, or `pairs` A/B pairs in a seeded order. */
export function passesOf(cfg: SweepConfig, ab: { pairs: number; seed: number } | null): Pass[] {
  if (ab) {
    const r = rng((ab.seed ^ 0x5eed_ab) >>> 0);
    const out: Pass[] = [];
    for (let p = 0; p < ab.pairs; p++)
      for (const arm of r() < 0.5 ? (["base", "head"] as const) : (["head", "base"] as const))
        out.push({ index: out.length, arm, pair: p });
    return out;
  }
  return Array.from({ length: cfg.repeats ?? 1 }, (_, index) => ({
    index,
    arm: "head" as const,
    pair: null,
  }));
}

/** A search's probes' settings (null for a list of levels); `tier`: an agent-capacity search. */
export type Probes = { start: number; targetPassPct: number; maxProbes: number; tier?: Tier } | null;

/** The search's next level from the levels it ran: a rate, or an agent-capacity search's sessions. */
function nextLevel(levels: readonly LevelResult[], search: NonNullable<Probes>): number | null {
  const tier = search.tier;
  if (tier)
    return nextSessions(
      levels.map((l) => tierProbe(l, tier)),
      search,
    );
  return nextProbe(levels.map(probeOf), search);
}

/**
 * The config a sweep runs and its search, if any: a search decides its levels as it goes, so its
 * config's levels start empty and grow with the probes (the given first level is where it starts).
 */
export function searchPlan(given: SweepConfig): { cfg: SweepConfig; probes: Probes } {
  const s = given.search ?? null;
  if (!s) return { cfg: given, probes: null };
  return {
    cfg: { ...given, levels: [] },
    probes: {
      start: given.levels[0] ?? 1,
      targetPassPct: s.target_pass_pct,
      maxProbes: s.max_probes,
      ...(s.tier ? { tier: s.tier } : {}),
    },
  };
}

/**
 * What a step says before it runs, once each: a repeat starting, the search's probes made even.
 * Returns the notes still to say.
 */
export function stepNotices(
  step: Step,
  o: { passes: number; ab: boolean; fresh: boolean; arrival: string; evenNoted: boolean },
  notice: (m: string) => void,
): { evenNoted: boolean } {
  if (step.pass.index > 0 && o.fresh && !o.ab)
    notice(`repeat ${step.pass.index + 1} of ${o.passes}: the same levels again, with fresh prompts`);
  if (!step.evened || o.evenNoted) return { evenNoted: o.evenNoted };
  notice(
    `search: probes inside the bracket arrive at constant intervals (${o.arrival} arrivals' own noise is wider than the 3 % the bracket is narrowed to)`,
  );
  return { evenNoted: true };
}

export interface Step {
  pass: Pass;
  plan: LevelPlan;
  /** The level's slot in the run (threads number requests and runners start by slot). */
  slot: number;
  /** Open loop inside a search's bracket: arrivals made even (the notice says why, once). */
  evened: boolean;
}

/**
 * The steps of a sweep, as they come: every pass's levels in order, skipping a level a pass
 * already has (a resumed sweep's), or for `--mode search` the next probe until the search ends
 * (`levels` grows as it goes: its config's levels are the probes so far).
 */
export function* schedule(
  cfg: SweepConfig,
  passes: readonly Pass[],
  done: (pass: Pass) => readonly LevelResult[],
  salt: number,
  search: Probes,
): Generator<Step> {
  for (const pass of passes) {
    for (let li = 0; ; li++) {
      let evened = false;
      if (search) {
        const next = nextLevel(done(pass), search);
        if (next === null) break;
        cfg.levels.push(Number(next.toPrecision(6)));
        // Inside the bracket the rates differ by a few %: a Poisson probe's own count noise
        // (1/sqrt(arrivals), 8 % at 150) is wider than that, so these probes arrive evenly.
        evened =
          cfg.mode === "open" &&
          cfg.arrival !== "constant" &&
          bracketOf(done(pass).map(probeOf), search.targetPassPct).hi !== null;
      } else if (li >= cfg.levels.length) break;
      const plan = planLevel(cfg, li, salt, pass.index);
      if (evened) plan.arrival = "constant";
      if (done(pass).some((l) => l.level === plan.level)) continue;
      yield { pass, plan, slot: pass.index * cfg.levels.length + li, evened };
    }
  }
}

/** Whether the sweep finished everything it was asked. */
export function scheduleComplete(
  cfg: SweepConfig,
  passes: readonly Pass[],
  done: (pass: Pass) => readonly LevelResult[],
  search: Probes,
): boolean {
  if (search) return nextLevel(done(passes[0]!), search) === null;
  return passes.every((p) => cfg.levels.every((l) => done(p).some((x) => x.level === l)));
}
