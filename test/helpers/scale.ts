import type { LevelResult } from "../../src/schema/v1.ts";

/**
 * A level as a server `k` times as fast would give it: every rate up, every time (latencies,
 * wall time) down, so the figures still fit their counts (the service refuses a rate its counts
 * cannot give). Pure: used by Node and workerd tests alike.
 */
export function fasterBy(l: LevelResult, k: number): void {
  for (const key of ["output_tok_s", "total_tok_s", "req_s", "goodput_req_s"] as const) l[key] *= k;
  l.wall_time_s /= k;
  for (const key of ["ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "e2e_stream_ms"] as const) {
    const stats = l[key] as unknown as Record<string, number | null>;
    for (const [name, v] of Object.entries(stats)) if (name !== "n" && v !== null) stats[name] = v / k;
  }
}
