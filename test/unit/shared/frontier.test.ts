/** The throughput-interactivity frontier and what it gives at a target speed per user, by hand. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { LevelResult, ResultDocument } from "../../../src/schema/v1.ts";
import { atTarget, frontierOf, frontierPoints } from "../../../src/shared/frontier.ts";

const example = () =>
  JSON.parse(
    readFileSync(resolve(import.meta.dirname, "../../../schema/examples/closed-sweep.json"), "utf8"),
  ) as ResultDocument;

/** A level of the example with its throughput, TPOT p50 and (two GPUs') mean power set. */
function level(at: number, outputTokS: number, tpotMs: number, powerW: number | null): LevelResult {
  const l = structuredClone(example().levels[0]!);
  l.level = at;
  l.output_tok_s = outputTokS;
  l.tpot_ms = { ...l.tpot_ms, p50: tpotMs };
  if (powerW !== null)
    l.gpu = {
      source: "nvidia-smi",
      energy_method: "counter",
      window: "steady",
      window_s: 10,
      energy_j: powerW * 10,
      mean_power_w: powerW,
      peak_power_w: powerW,
      idle_power_w: 100,
      output_tok_per_j: outputTokS / powerW,
      j_per_output_tok: powerW / outputTokS,
      j_per_request: null,
      w_per_user: null,
      usd_per_m_output_tok: null,
      usd_per_m_total_tok: null,
      per_gpu: [0, 1].map((index) => ({
        index,
        uuid: null,
        name: "GPU",
        samples: 50,
        energy_j: null,
        mean_power_w: powerW / 2,
        peak_power_w: null,
        idle_power_w: null,
        util_pct_mean: null,
        mem_used_max_mib: null,
        sm_clock_mhz_mean: null,
        temp_max_c: null,
      })),
      unknown_reason: null,
    };
  return l;
}

// 1 user: 100 tok/s per user (TPOT 10 ms), 100 tok/s; 8 users: 50 per user, 400 tok/s;
// 32 users: 20 per user, 640 tok/s; 16 users measured worse than 32 in both (dominated).
const levels = [
  level(1, 100, 10, 300),
  level(8, 400, 20, 500),
  level(16, 500, 50, 700),
  level(32, 640, 50, 800),
];

describe("the frontier", () => {
  it("one point per usable level, ordered by speed per user, the dominated one not Pareto", () => {
    const f = frontierPoints(levels);
    expect(f.gpus).toBe(2);
    expect(f.points.map((p) => [p.level, p.tok_s_per_user, p.pareto])).toEqual([
      [16, 20, false],
      [32, 20, true],
      [8, 50, true],
      [1, 100, true],
    ]);
    expect(f.points.find((p) => p.level === 32)!.output_tok_s_per_gpu).toBe(320);
  });

  it("at a target speed: throughput and power linear between the two levels around it, $ and J from them", () => {
    const f = frontierPoints(levels);
    // 35 tok/s per user: half way from level 32 (20) to level 8 (50)
    const t = atTarget(f, 35, 2.5);
    const y = (640 + 400) / 2;
    const power = (800 + 500) / 2;
    expect(t).toMatchObject({ reached: true, between: [32, 8] });
    expect(t.output_tok_s).toBeCloseTo(y, 9);
    expect(t.output_tok_s_per_gpu).toBeCloseTo(y / 2, 9);
    // two GPUs at $2.50 an hour each, over the tokens an hour gives
    expect(t.usd_per_m_output_tok!).toBeCloseTo(((2.5 * 2) / (y * 3600)) * 1e6, 9);
    expect(t.j_per_output_tok!).toBeCloseTo(power / y, 9);
    expect(t.output_tok_per_kwh!).toBeCloseTo(3.6e6 / (power / y), 6);
    // on a level: that level's own figures
    expect(atTarget(f, 50, null)).toMatchObject({ reached: true, between: [8], output_tok_s: 400 });
  });

  it("never extrapolated: a speed beyond the levels run is not reached", () => {
    const f = frontierPoints(levels);
    for (const x of [10, 150])
      expect(atTarget(f, x, 2.5)).toMatchObject({
        reached: false,
        output_tok_s: null,
        usd_per_m_output_tok: null,
      });
  });

  it("a document's frontier: its targets from the configuration; none under two usable levels", () => {
    const doc = example();
    doc.levels = levels;
    doc.config = {
      ...doc.config!,
      target_tok_s_per_user: [35, 150],
      gpu_telemetry: { sample_ms: 200, gpus: null, hour_cost_usd: 2.5, metrics_url: null },
    } as ResultDocument["config"];
    const f = frontierOf(doc)!;
    expect(f.targets.map((t) => t.reached)).toEqual([true, false]);
    doc.levels = [levels[0]!];
    expect(frontierOf(doc)).toBeNull();
  });
});
