/**
 * The later measures of the catalogue, in its order (a measure's id is its place): the server's
 * start and agent capacity (of a whole run), jobs per GPU and the parts of TTFT (of a level). Pure.
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
  [
    {
      name: "jobs_per_hour_per_gpu",
      family: "rate",
      unit: "jobs/h",
      direction: "higher",
      label: "jobs per hour per GPU",
      description: "complete jobs per GPU per hour at the level: jobs per hour / the GPUs the telemetry read",
    },
    (l) => l.jobs?.jobs_per_hour_per_gpu ?? null,
  ],
  [
    {
      name: "startup_first_token_s",
      family: "latency",
      unit: "s",
      direction: "lower",
      label: "server start to first token",
      description:
        "--server-command: from its start to the first token of a one-token request just after ready, cold",
    },
    null,
  ],
  [
    {
      name: "startup_warm_s",
      family: "latency",
      unit: "s",
      direction: "lower",
      label: "server warm start",
      description: "--startup both: the server stopped and started again, from that start to ready",
    },
    null,
  ],
  [
    {
      name: "ttft_p50_queue_ms",
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: "TTFT p50 queue",
      description:
        "TTFT p50's queue part: the time before the server began the prompt, less the client's part: queue and transport (from the server's per-request timings)",
      part_of: "ttft_p50_ms",
    },
    (l) => l.ttft_split?.p50.queue_ms ?? null,
  ],
  [
    {
      name: "ttft_p50_prefill_ms",
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: "TTFT p50 prefill",
      description:
        "TTFT p50's prefill part: the server's own prompt time (prefill and first token) (from the server's per-request timings)",
      part_of: "ttft_p50_ms",
    },
    (l) => l.ttft_split?.p50.prefill_ms ?? null,
  ],
  [
    {
      name: "ttft_p50_client_ms",
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: "TTFT p50 client",
      description:
        "TTFT p50's client part: the client's median lateness in reading what arrived (from the server's per-request timings)",
      part_of: "ttft_p50_ms",
    },
    (l) => l.ttft_split?.p50.client_ms ?? null,
  ],
  [
    {
      name: "ttft_p95_queue_ms",
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: "TTFT p95 queue",
      description:
        "TTFT p95's queue part: the time before the server began the prompt, less the client's part: queue and transport (from the server's per-request timings)",
      part_of: "ttft_p95_ms",
    },
    (l) => l.ttft_split?.p95.queue_ms ?? null,
  ],
  [
    {
      name: "ttft_p95_prefill_ms",
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: "TTFT p95 prefill",
      description:
        "TTFT p95's prefill part: the server's own prompt time (prefill and first token) (from the server's per-request timings)",
      part_of: "ttft_p95_ms",
    },
    (l) => l.ttft_split?.p95.prefill_ms ?? null,
  ],
  [
    {
      name: "ttft_p95_client_ms",
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: "TTFT p95 client",
      description:
        "TTFT p95's client part: the client's median lateness in reading what arrived (from the server's per-request timings)",
      part_of: "ttft_p95_ms",
    },
    (l) => l.ttft_split?.p95.client_ms ?? null,
  ],
];
