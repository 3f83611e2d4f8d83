/** The outcome of an agent-capacity search (tier "fast") as a stored document carries it, for tests of the service and the dashboard. */
import type { ResultDocument } from "../../src/schema/v1.ts";

export function agentCapacitySaturation(sessions: number): NonNullable<ResultDocument["saturation"]> {
  return {
    max_rate_rps: null,
    bracket_rps: [null, null],
    pass_pct_at_max: null,
    goodput_at_max_rps: null,
    target_pass_pct: 95,
    probes: 4,
    method: "closed-loop probes of agents' sessions",
    agents: {
      tier: { name: "fast", ttft_p95_ms: 60, tok_s_per_user: 100 },
      max_sessions: sessions,
      bracket_sessions: [sessions, sessions + 1],
      ttft_p95_ms_at_max: 20,
      tok_s_per_user_at_max: 250,
      per_gpu: null,
      per_kw: null,
    },
  };
}
