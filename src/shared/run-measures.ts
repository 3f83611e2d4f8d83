/**
 * Measures of a whole run rather than of a level, the later ones of the catalogue (in its order:
 * a measure's id is its place): the server's start and agent capacity. Pure.
 */
import type { LevelValue, MeasureDef } from "./measure-types.ts";

export const RUN_MEASURES: readonly [MeasureDef, LevelValue | null][] = [
  [
    {
      name: "startup_s",
      family: "latency",
      unit: "s",
      direction: "lower",
      label: "server startup",
      description:
        "the Action's server-command: from its start to the server ready (its readiness check passing), cold",
    },
    null,
  ],
  [
    {
      name: "agent_sessions",
      family: "search",
      unit: "sessions",
      direction: "higher",
      label: "agent capacity",
      description:
        "--agent-tier: the most concurrent agent sessions whose calls met the tier (TTFT p95 and output speed per user)",
    },
    null,
  ],
];
