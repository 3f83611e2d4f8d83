// Energy per level from telemetry reads: the counter where there is one, the integral of power
// where not, and marks instead of figures for sparse or lost samples.
import { describe, expect, it } from "vitest";
import { idlePower, levelGpu } from "../../../src/core/results/energy.ts";
import {
  type GpuSample,
  parseDcgm,
  parseSmiLine,
  smiTimestamp,
} from "../../../src/core/server/gpu-telemetry.ts";

const read = (t: number, power: number | null, energyJ: number | null, index = 0): GpuSample => ({
  t_ms: t,
  index,
  uuid: null,
  name: "g",
  power_w: power,
  power_limit_w: null,
  energy_j: energyJ,
  util_pct: 50,
  mem_util_pct: null,
  mem_used_mib: 100 + t / 1000,
  mem_total_mib: null,
  sm_clock_mhz: 1500,
  temp_c: 60,
});
const base = {
  source: "test",
  died: null,
  steady: true,
  idle: new Map([[0, 100]]),
  level: 8,
  closedLoop: true,
  outputTokS: 1000,
  totalTokS: 5000,
  reqS: 10,
  gpuHourUsd: 3.6,
};

describe("a level's GPU energy", () => {
  it("from the counter, interpolated at the window's edges", () => {
    // 250 W for 10 s, reads every second; window 2.5 s to 7.5 s: 1,250 J
    const s = Array.from({ length: 11 }, (_, i) => read(i * 1000, 250, 5000 + 250 * i));
    const g = levelGpu({ ...base, samples: s, windowMs: [2500, 7500] });
    expect(g.energy_method).toBe("counter");
    expect(g.energy_j).toBeCloseTo(1250, 9);
    expect(g.mean_power_w).toBeCloseTo(250, 9);
    expect(g.output_tok_per_j).toBeCloseTo(4, 9);
    expect(g.j_per_output_tok).toBeCloseTo(0.25, 9);
    expect(g.j_per_request).toBeCloseTo(25, 9);
    expect(g.w_per_user).toBeCloseTo(31.25, 9);
    // $3.60 an hour = $0.001 a second, at 1,000 tok/s: $1 per million
    expect(g.usd_per_m_output_tok).toBeCloseTo(1, 9);
    expect(g.usd_per_m_total_tok).toBeCloseTo(0.2, 9);
    expect(g.per_gpu[0]).toMatchObject({ samples: 5, mem_used_max_mib: 107, temp_max_c: 60 });
  });
  it("without a counter: the integral of power (trapezoids, clipped)", () => {
    const s = Array.from({ length: 11 }, (_, i) => read(i * 1000, 100 + 10 * i, null));
    const g = levelGpu({ ...base, samples: s, windowMs: [2000, 8000] });
    expect(g.energy_method).toBe("integrated");
    expect(g.energy_j).toBeCloseTo(((120 + 180) / 2) * 6, 9);
  });
  it("too few reads in the window, or a sampler that died in it: marked, never a figure", () => {
    const s = Array.from({ length: 11 }, (_, i) => read(i * 1000, 250, 250 * i));
    const sparse = levelGpu({ ...base, samples: s, windowMs: [2500, 5500] });
    expect(sparse.energy_j).toBeNull();
    expect(sparse.unknown_reason).toMatch(/fewer than 5 samples/);
    const died = levelGpu({
      ...base,
      samples: s,
      windowMs: [1000, 9000],
      died: { t_ms: 4000, reason: "killed" },
    });
    expect(died.energy_j).toBeNull();
    expect(died.unknown_reason).toBe("the GPU sampler stopped 3.0 s into the window (killed)");
  });
  it("idle power: each GPU's mean before the first level", () => {
    const s = [read(0, 60, null), read(100, 70, null), read(200, 300, null), read(0, 40, null, 1)];
    expect(idlePower(s, [0, 150])).toEqual(
      new Map([
        [0, 65],
        [1, 40],
      ]),
    );
  });
});

describe("reading telemetry", () => {
  it("nvidia-smi lines: its own timestamp, [N/A] as unknown, millijoules as joules", () => {
    const t = smiTimestamp("2026/12/01 20:17:00.123")!;
    expect(new Date(t).getMilliseconds()).toBe(123);
    const s = parseSmiLine(
      "2026/12/01 20:17:00.123, 1, GPU-abc, NVIDIA H200, 512.30, 700.00, 123456789, 97, 55, 80000, 143771, 1980, [N/A]",
      (e) => e - t,
      999,
    )!;
    expect(s).toMatchObject({ t_ms: 0, index: 1, power_w: 512.3, energy_j: 123456.789, temp_c: null });
    expect(parseSmiLine("index, name", (e) => e, 0)).toBeNull();
  });
  it("a DCGM exporter's text: one sample per gpu label", () => {
    const text = [
      'DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b",modelName="H100"} 300.5',
      'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",modelName="H100"} 250',
      'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a",modelName="H100"} 5000',
      "# a comment",
    ].join("\n");
    const s = parseDcgm(text, 42);
    expect(s.map((x) => [x.index, x.power_w, x.energy_j, x.uuid])).toEqual([
      [0, 250, 5, "GPU-a"],
      [1, 300.5, null, "GPU-b"],
    ]);
  });
});
