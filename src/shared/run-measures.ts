/**
 * The later measures of the catalogue, in its order (a measure's id is its place): the server's
 * start and agent capacity (of a whole run), jobs per GPU, the parts of TTFT and the server's
 * mean phases (of a level). Pure.
 */
import type { LevelValue, MeasureDef } from "./measure-types.ts";

/** A part of other rows' changes (row-splits.ts): a latency in ms, stored and trended, never a row. */
function partMeasure(
  name: string,
  label: string,
  description: string,
  partOf: readonly string[],
  value: LevelValue,
  source?: "metrics",
): [MeasureDef, LevelValue] {
  return [
    {
      name,
      family: "latency",
      unit: "ms",
      direction: "lower",
      label,
      description,
      part_of: partOf,
      ...(source ? { split_source: source } : {}),
    },
    value,
  ];
}

const PER_REQUEST = "(from the server's per-request timings)";
const QUEUE = "the time before the server began the prompt, less the client's part: queue and transport";
const PREFILL = "the server's own prompt time (prefill and first token)";

/**
 * One part of a row split per request (`ttft_split`, `e2e_split`, `tpot_split`): a part the
 * level's split lacks (TTFT has no decode, TPOT no p95) reads null.
 */
const splitPart = (
  of: "ttft" | "e2e" | "tpot",
  q: "p50" | "p95",
  part: "queue" | "prefill" | "decode" | "client",
  what: string,
) => {
  const row = of.toUpperCase();
  return partMeasure(
    `${of}_${q}_${part}_ms`,
    `${row} ${q} ${part}`,
    `${row} ${q}'s ${part} part: ${what} ${PER_REQUEST}`,
    [`${of}_${q}_ms`],
    (l) =>
      (l[`${of}_split`]?.[q as "p50"] as Record<string, number | null> | undefined)?.[`${part}_ms`] ?? null,
  );
};

const TTFT_ROWS = ["ttft_p50_ms", "ttft_p95_ms"];
const E2E_ROWS = ["e2e_p50_ms", "e2e_p95_ms"];

/** A phase's mean over the level's window, from the server's /metrics histograms (`server_means`). */
const meanPart = (part: "queue" | "prefill" | "decode", what: string, of: string[]) =>
  partMeasure(
    `server_mean_${part}_ms`,
    `server mean ${part}`,
    `the server's own mean ${what} over the level's window (its /metrics histograms)`,
    of,
    (l) => l.server_means?.[`${part}_ms`] ?? null,
    "metrics",
  );

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
    splitPart("ttft", q, "queue", QUEUE),
    splitPart("ttft", q, "prefill", PREFILL),
    splitPart("ttft", q, "client", "the client's median lateness in reading what arrived"),
  ]),
  meanPart("queue", "time waiting for a slot", [...TTFT_ROWS, ...E2E_ROWS]),
  meanPart("prefill", "time from scheduled to first token", [...TTFT_ROWS, ...E2E_ROWS]),
  meanPart("decode", "time from first token to last", E2E_ROWS),
  ...(["p50", "p95"] as const).flatMap((q) => [
    splitPart("e2e", q, "queue", QUEUE),
    splitPart("e2e", q, "prefill", PREFILL),
    splitPart("e2e", q, "decode", "the server's own decode time (first token to last)"),
    splitPart(
      "e2e",
      q,
      "client",
      "the client's lateness at the first token and the stream's time beyond the server's decode",
    ),
  ]),
  splitPart("tpot", "p50", "decode", "the server's own decode time over the output tokens after the first"),
  splitPart(
    "tpot",
    "p50",
    "client",
    "TPOT less the server's per-token time: the client reading late and the transport",
  ),
];
