/**
 * A level's GPU energy from the telemetry samples (CONCEPTS.md §14): whole-GPU energy over the
 * level's steady window (the whole level where it had none), from the driver's energy counter
 * where it has one (interpolated at the window's edges) and the integral of power otherwise;
 * derived tokens per joule, joules per token and per request, watts per user, and with an hourly
 * price per GPU, dollars per million tokens at the level's throughput. Pure.
 */

import type { GpuSampleRecord as GpuSample } from "../../schema/v1.ts";
import { maxOrNull, minOf } from "../../shared/extremes.ts";

export interface GpuFigures {
  index: number;
  uuid: string | null;
  name: string | null;
  samples: number;
  energy_j: number | null;
  mean_power_w: number | null;
  peak_power_w: number | null;
  idle_power_w: number | null;
  util_pct_mean: number | null;
  mem_used_max_mib: number | null;
  sm_clock_mhz_mean: number | null;
  temp_max_c: number | null;
}

export interface LevelGpu {
  source: string;
  energy_method: "counter" | "integrated" | null;
  window: "steady" | "level";
  window_s: number;
  energy_j: number | null;
  mean_power_w: number | null;
  peak_power_w: number | null;
  idle_power_w: number | null;
  output_tok_per_j: number | null;
  j_per_output_tok: number | null;
  j_per_request: number | null;
  w_per_user: number | null;
  usd_per_m_output_tok: number | null;
  usd_per_m_total_tok: number | null;
  per_gpu: GpuFigures[];
  /** Why the energy is unknown (the sampler died, too few samples), or null. */
  unknown_reason: string | null;
  /** An energy counter set aside for the power reads, with why, or null. */
  note: string | null;
}

/** A counter whose window energy differs from the integrated power by more than this factor is broken. */
const COUNTER_AGREES = 2;
/** Nor may it imply more than this times the higher of the power limit and the peak read. */
const COUNTER_CEILING = 1.5;

/** Fewer samples than this inside a window make no figure: it is marked, not reported. */
export const MIN_WINDOW_SAMPLES = 5;

const meanOf = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The counter at time t, linearly between the samples around it; null outside them. */
function counterAt(s: readonly GpuSample[], t: number): number | null {
  for (let i = 1; i < s.length; i++) {
    const a = s[i - 1]!;
    const b = s[i]!;
    if (a.t_ms <= t && t <= b.t_ms && a.energy_j !== null && b.energy_j !== null) {
      if (b.t_ms === a.t_ms) return a.energy_j;
      return a.energy_j + ((b.energy_j - a.energy_j) * (t - a.t_ms)) / (b.t_ms - a.t_ms);
    }
  }
  return null;
}

/** ∫ power dt over [a, b] (trapezoids between samples, clipped at the edges), J. */
function integratedJ(s: readonly GpuSample[], a: number, b: number): number | null {
  const pts = s.filter((x) => x.power_w !== null);
  if (pts.length < 2 || pts[0]!.t_ms > a || pts[pts.length - 1]!.t_ms < b) return null;
  let j = 0;
  for (let i = 1; i < pts.length; i++) {
    const lo = Math.max(a, pts[i - 1]!.t_ms);
    const hi = Math.min(b, pts[i]!.t_ms);
    if (hi <= lo) continue;
    const p = (t: number) =>
      pts[i - 1]!.power_w! +
      ((pts[i]!.power_w! - pts[i - 1]!.power_w!) * (t - pts[i - 1]!.t_ms)) /
        (pts[i]!.t_ms - pts[i - 1]!.t_ms || 1);
    j += ((p(lo) + p(hi)) / 2) * ((hi - lo) / 1000);
  }
  return j;
}

export interface LevelGpuInput {
  source: string;
  samples: readonly GpuSample[];
  /** The sampler's end before the window's, with why. */
  died: { t_ms: number; reason: string } | null;
  windowMs: [number, number];
  steady: boolean;
  idle: Map<number, number | null>;
  level: number;
  closedLoop: boolean;
  outputTokS: number;
  totalTokS: number;
  reqS: number;
  /** Dollars per GPU-hour (--gpu-hour-cost), or null. */
  gpuHourUsd: number | null;
}

export function levelGpu(i: LevelGpuInput): LevelGpu {
  const [a, b] = i.windowMs;
  const windowS = (b - a) / 1000;
  const byGpu = new Map<number, GpuSample[]>();
  for (const s of i.samples) {
    const list = byGpu.get(s.index) ?? [];
    list.push(s);
    byGpu.set(s.index, list);
  }
  let reason: string | null = null;
  if (i.died !== null && i.died.t_ms < b)
    reason =
      i.died.t_ms <= a
        ? `the GPU sampler had stopped ${((a - i.died.t_ms) / 1000).toFixed(1)} s before the window (${i.died.reason})`
        : `the GPU sampler stopped ${((i.died.t_ms - a) / 1000).toFixed(1)} s into the window (${i.died.reason})`;
  let method: LevelGpu["energy_method"] = null;
  const notes: string[] = [];
  const perGpu: GpuFigures[] = [...byGpu.entries()]
    .sort((x, y) => x[0] - y[0])
    .map(([index, all]) => {
      const inside = all.filter((s) => s.t_ms >= a && s.t_ms <= b);
      const num = (f: (s: GpuSample) => number | null) =>
        inside.map(f).filter((v): v is number => v !== null);
      let energy: number | null = null;
      if (reason === null && inside.length >= MIN_WINDOW_SAMPLES) {
        const ea = counterAt(all, a);
        const eb = counterAt(all, b);
        const counterJ = ea !== null && eb !== null && eb >= ea ? eb - ea : null;
        const integral = integratedJ(all, a, b);
        // The counter sees every millisecond, the power reads only the instants sampled: the
        // counter is believed unless it is impossible (a jump, a frozen or a wrapped counter):
        // above 1.5 x the power limit or the peak read, or off the power reads by 2 x.
        const ceiling =
          COUNTER_CEILING *
          Math.max(maxOrNull(num((s) => s.power_limit_w)) ?? 0, maxOrNull(num((s) => s.power_w)) ?? 0);
        const impossible =
          counterJ !== null &&
          windowS > 0 &&
          ((ceiling > 0 && counterJ / windowS > ceiling) ||
            (integral !== null &&
              integral > 0 &&
              (counterJ > COUNTER_AGREES * integral || counterJ * COUNTER_AGREES < integral)));
        if (counterJ !== null && !impossible) {
          energy = counterJ;
          method = "counter";
        } else {
          energy = integral;
          if (energy !== null && method === null) method = "integrated";
          if (impossible && windowS > 0)
            notes.push(
              `GPU ${index}'s energy counter gave ${(counterJ! / windowS).toFixed(0)} W over the window, its power reads ${integral !== null ? `${(integral / windowS).toFixed(0)} W` : "nothing"}: the counter was set aside${integral !== null ? ", the power reads integrated" : ""}`,
            );
        }
      }
      return {
        index,
        uuid: all[0]!.uuid,
        name: all[0]!.name,
        samples: inside.length,
        energy_j: energy,
        mean_power_w: energy !== null && windowS > 0 ? energy / windowS : null,
        peak_power_w: maxOrNull(num((s) => s.power_w)),
        idle_power_w: i.idle.get(index) ?? null,
        util_pct_mean: meanOf(num((s) => s.util_pct)),
        mem_used_max_mib: maxOrNull(num((s) => s.mem_used_mib)),
        sm_clock_mhz_mean: meanOf(num((s) => s.sm_clock_mhz)),
        temp_max_c: maxOrNull(num((s) => s.temp_c)),
      };
    });
  if (reason === null && perGpu.some((g) => g.samples < MIN_WINDOW_SAMPLES))
    reason = `fewer than ${MIN_WINDOW_SAMPLES} samples in the ${windowS.toFixed(1)} s window (${minOf(perGpu.map((g) => g.samples))}): sample more often (--gpu-sample-ms) or lengthen the level`;
  if (reason === null && perGpu.some((g) => g.energy_j === null))
    reason = "the samples around the window's edges have neither an energy counter nor power";
  if (perGpu.length === 0) reason ??= "no GPU sample in the window";
  const energy = reason === null ? perGpu.reduce((s, g) => s + g.energy_j!, 0) : null;
  const power = energy !== null && windowS > 0 ? energy / windowS : null;
  const idle = perGpu.every((g) => g.idle_power_w !== null)
    ? perGpu.reduce((s, g) => s + g.idle_power_w!, 0)
    : null;
  const perS = i.gpuHourUsd !== null ? (i.gpuHourUsd * perGpu.length) / 3600 : null;
  const perM = (rate: number) => (perS !== null && rate > 0 ? (perS / rate) * 1e6 : null);
  return {
    source: i.source,
    energy_method: energy !== null ? method : null,
    window: i.steady ? "steady" : "level",
    window_s: windowS,
    energy_j: energy,
    mean_power_w: power,
    // Summed: each GPU's peak (they peak together under one load).
    peak_power_w: perGpu.every((g) => g.peak_power_w !== null)
      ? perGpu.reduce((x, g) => x + g.peak_power_w!, 0)
      : null,
    idle_power_w: idle,
    output_tok_per_j: power !== null && power > 0 ? i.outputTokS / power : null,
    j_per_output_tok: power !== null && i.outputTokS > 0 ? power / i.outputTokS : null,
    j_per_request: power !== null && i.reqS > 0 ? power / i.reqS : null,
    w_per_user: power !== null && i.closedLoop && i.level > 0 ? power / i.level : null,
    usd_per_m_output_tok: perM(i.outputTokS),
    usd_per_m_total_tok: perM(i.totalTokS),
    per_gpu: perGpu,
    unknown_reason: reason,
    note: notes.length > 0 ? notes.join("; ") : null,
  };
}

/** Each GPU's mean power over the idle window before the first level (null without samples there). */
export function idlePower(
  samples: readonly GpuSample[],
  windowMs: [number, number],
): Map<number, number | null> {
  const out = new Map<number, number | null>();
  for (const s of samples) if (!out.has(s.index)) out.set(s.index, null);
  for (const idx of out.keys()) {
    const p = samples
      .filter((s) => s.index === idx && s.t_ms >= windowMs[0] && s.t_ms <= windowMs[1] && s.power_w !== null)
      .map((s) => s.power_w!);
    out.set(idx, meanOf(p));
  }
  return out;
}
