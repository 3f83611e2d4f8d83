/**
 * The later measures of the catalogue, in its order (a measure's id is its place): the server's
 * start and agent capacity (of a whole run), jobs per GPU, the parts of TTFT and the server's
 * mean phases (of a level). Pure.
 */
import type { LevelValue, MeasureDef } from "./measure-types.ts";

/** One TTFT or E2E percentile's part, from the server's per-request timings (`ttft_split`, `e2e_split`). */
function requestPart(
  of: "ttft" | "e2e",
  q: "p50" | "p95",
  part: "queue" | "prefill" | "decode" | "client",
  what: string,
): [MeasureDef, LevelValue] {
  const name = of === "ttft" ? "TTFT" : "E2E";
  return [
    {
      name: `${of}_${q}_${part}_ms`,
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: `${name} ${q} ${part}`,
      description: `${name} ${q}'s ${part} part: ${what} (from the server's per-request timings)`,
      part_of: [`${of}_${q}_ms`],
    },
    of === "ttft"
      ? (l) => (part === "decode" ? null : (l.ttft_split?.[q][`${part}_ms`] ?? null))
      : (l) => l.e2e_split?.[q][`${part}_ms`] ?? null,
  ];
}

const QUEUE = "the time before the server began the prompt, less the client's part: queue and transport";
const PREFILL = "the server's own prompt time (prefill and first token)";
/** TPOT p50's part, from the server's per-request decode time (`tpot_split`). */
function tpotPart(part: "decode" | "client", what: string): [MeasureDef, LevelValue] {
  return [
    {
      name: `tpot_p50_${part}_ms`,
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: `TPOT p50 ${part}`,
      description: `TPOT p50's ${part} part: ${what} (from the server's per-request timings)`,
      part_of: ["tpot_p50_ms"],
    },
    (l) => l.tpot_split?.p50[`${part}_ms`] ?? null,
  ];
}

const TTFT_ROWS = ["ttft_p50_ms", "ttft_p95_ms"];
const E2E_ROWS = ["e2e_p50_ms", "e2e_p95_ms"];

/** A phase's mean over the level's window, from the server's /metrics histograms (`server_means`). */
function meanPart(
  part: "queue" | "prefill" | "decode",
  what: string,
  of: string[],
): [MeasureDef, LevelValue] {
  return [
    {
      name: `server_mean_${part}_ms`,
      family: "latency",
      unit: "ms",
      direction: "lower",
      label: `server mean ${part}`,
      description: `the server's own mean ${what} over the level's window (its /metrics histograms)`,
      part_of: of,
      split_source: "metrics",
    },
    (l) => l.server_means?.[`${part}_ms`] ?? null,
  ];
}

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
  ...(["p50", "p95"] as const).flatMap((q) => [
    requestPart("ttft", q, "queue", QUEUE),
    requestPart("ttft", q, "prefill", PREFILL),
    requestPart("ttft", q, "client", "the client's median lateness in reading what arrived"),
  ]),
  meanPart("queue", "time waiting for a slot", [...TTFT_ROWS, ...E2E_ROWS]),
  meanPart("prefill", "time from scheduled to first token", [...TTFT_ROWS, ...E2E_ROWS]),
  meanPart("decode", "time from first token to last", E2E_ROWS),
  ...(["p50", "p95"] as const).flatMap((q) => [
    requestPart("e2e", q, "queue", QUEUE),
    requestPart("e2e", q, "prefill", PREFILL),
    requestPart("e2e", q, "decode", "the server's own decode time (first token to last)"),
    requestPart(
      "e2e",
      q,
      "client",
      "the client's lateness at the first token and the stream's time beyond the server's decode",
    ),
  ]),
  tpotPart("decode", "the server's own decode time over the output tokens after the first"),
  tpotPart("client", "TPOT less the server's per-token time: the client reading late and the transport"),
];
