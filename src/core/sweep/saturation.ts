/** The outcome of `--mode search`: the saturation point and how it was found (search.ts). */
import type { LevelResult, SweepConfig } from "../../schema/v1.ts";
import { bracketOf } from "./search.ts";

export function saturationOf(
  levels: readonly LevelResult[],
  search: NonNullable<SweepConfig["search"]>,
): NonNullable<import("../../schema/v1.ts").ResultDocument["saturation"]> {
  const probes = levels.map((l) => ({ rate: l.level, passPct: l.slo_pass_pct ?? 0 }));
  const { lo, hi } = bracketOf(probes, search.target_pass_pct);
  const atMax = lo === null ? [] : levels.filter((l) => Math.abs(l.level / lo - 1) < 0.001);
  const mean = (xs: number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  return {
    max_rate_rps: lo,
    bracket_rps: [lo, hi],
    pass_pct_at_max: mean(atMax.map((l) => l.slo_pass_pct ?? 0)),
    goodput_at_max_rps: mean(atMax.map((l) => l.goodput_req_s)),
    target_pass_pct: search.target_pass_pct,
    probes: levels.length,
    method:
      "open-loop probes: the rate doubles from the start until a probe fails (or halves until one passes), then the bracket between the highest passing and the lowest failing rate is bisected to 3 % or until the probes run out; a probe within 2 points of the target is measured twice and averaged",
  };
}

/** "sustains 31.5 req/s under SLO (bracket 30.8–32.3)", or why not. */
export function saturationHeadline(s: NonNullable<ReturnType<typeof saturationOf>>): string {
  const f = (x: number | null) => (x === null ? "?" : x.toPrecision(3));
  const [lo, hi] = s.bracket_rps;
  if (lo === null)
    return `no probed rate kept ${s.target_pass_pct}% of requests within the SLOs (lowest probe failed): lower the starting --levels`;
  if (hi === null)
    return `sustains at least ${f(lo)} req/s under SLO (no probe failed in ${s.probes}: raise --search-max-probes or the starting rate)`;
  return `sustains ${f(lo)} req/s under SLO (bracket ${f(lo)}–${f(hi)}; ${f(s.pass_pct_at_max)}% of requests within SLO there, goodput ${f(s.goodput_at_max_rps)} req/s; ${s.probes} probes)`;
}
