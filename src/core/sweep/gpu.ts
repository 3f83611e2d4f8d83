/**
 * GPU telemetry around a sweep: the sampler opened before the first level (a short idle window
 * first), each level's energy and cost from its window, and the raw reads for the document.
 */
import { performance } from "node:perf_hooks";
import type { LevelResult, ResultDocument, SweepConfig } from "../../schema/v1.ts";
import { idlePower, type LevelGpu, levelGpu, MIN_WINDOW_SAMPLES } from "../results/energy.ts";
import { GpuSampler } from "../server/gpu-sampler.ts";

export interface GpuRun {
  /** A level's energy and cost, from its steady window (the whole level without one). */
  figures(l: LevelResult): Promise<LevelGpu>;
  record(): NonNullable<ResultDocument["gpu_telemetry"]>;
  stop(): Promise<void>;
}

export async function openGpu(
  cfg: SweepConfig,
  origin: { originMs: number; originWallMs: number },
  notice: (m: string) => void,
  metricsUrl: string | null = null,
): Promise<GpuRun | null> {
  const g = cfg.gpu_telemetry;
  if (!g) return null;
  const opened = await GpuSampler.open({
    sampleMs: g.sample_ms,
    gpus: g.gpus,
    // the URL as given (its credentials used, never shown), else the recorded one
    metricsUrl: metricsUrl ?? g.metrics_url,
    ...origin,
  });
  if ("absent" in opened) {
    notice(opened.absent);
    return null;
  }
  const s = opened;
  const idleStart = performance.now() - origin.originMs;
  // The idle window: enough reads for a figure, before any load.
  await s.waitForSamples(MIN_WINDOW_SAMPLES, Math.max(2000, 10 * g.sample_ms));
  const idleWindow: [number, number] = [idleStart, performance.now() - origin.originMs];
  if (s.died) notice(`GPU telemetry stopped before the first level (${s.died.reason}): energy is unknown`);
  const idle = idlePower(s.samples, idleWindow);
  return {
    async figures(l) {
      const st = l.steady_state;
      const steady = st?.steady === true && st.window_start_ms !== null && st.window_end_ms !== null;
      const windowMs: [number, number] = steady
        ? [st!.window_start_ms!, st!.window_end_ms!]
        : [l.started_at_ms, l.started_at_ms + l.wall_time_s * 1000];
      await s.waitPast(windowMs[1], 3 * g.sample_ms + 1000);
      const f = levelGpu({
        source: s.source,
        samples: s.samples,
        died: s.died,
        windowMs,
        steady,
        idle,
        level: l.level,
        closedLoop: l.mode === "closed",
        outputTokS: l.output_tok_s,
        totalTokS: l.total_tok_s,
        reqS: l.req_s,
        gpuHourUsd: g.hour_cost_usd,
      });
      if (f.unknown_reason !== null) notice(`level ${l.level}: GPU energy unknown: ${f.unknown_reason}`);
      if (f.note !== null) notice(`level ${l.level}: ${f.note}`);
      return f;
    },
    record: () => ({
      source: s.source,
      sample_ms: g.sample_ms,
      gpus: s.gpus.map((x) => ({ index: x.index, uuid: x.uuid, name: x.name })),
      idle_window_ms: idleWindow,
      died: s.died,
      samples: [...s.samples],
    }),
    stop: async () => {
      await s.stop();
      for (const n of s.notes) notice(`GPU telemetry: ${n}`);
    },
  };
}
