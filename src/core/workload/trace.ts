/**
 * `--trace FILE`: replaying a production trace. Mooncake-style JSON Lines, one request per
 * line: `timestamp` (ms), `input_length` and `output_length` (tokens), and optionally `hash_ids`,
 * the ids of the prompt's 512-token blocks: requests that list the same id share that block's
 * text, so the server's prefix cache sees the sharing the trace recorded. The requests are sent
 * in the trace's order at its times (divided by `--trace-speed`), scheduled on absolute time like
 * the open loop; how late each send was (replay lag) is the open loop's schedule lag.
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { TokenbenchError, UsageError } from "../../schema/errors.ts";
import type { PromptCalibration, SweepConfig } from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import { type Dataset, type DatasetEntry, readWorkloadFile, withoutBom } from "./dataset.ts";
import { MIN_TAGGED_WORDS, makePrompt, promptWords, wordsFor } from "./prompts.ts";

/** Tokens per `hash_ids` block (Mooncake's). */
export const TRACE_BLOCK_TOKENS = 512;
/** Replay lag p99 above this is reported: the trace's times were not kept. */
export const REPLAY_LAG_WARN_MS = 50;

export interface TraceRow {
  timestampMs: number;
  inputTokens: number;
  outputTokens: number;
  hashIds: number[];
}

export interface Trace {
  name: string;
  lines: number;
  sha256: string;
  rows: TraceRow[];
  /** What the sweep should say about the file, once (e.g. rows that share a timestamp). */
  notices?: string[];
}

export class TraceError extends TokenbenchError {
  constructor(message: string) {
    super("trace_invalid", message);
  }
}

const posInt = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v > 0;

function rowOf(o: unknown, where: string): TraceRow {
  if (o === null || typeof o !== "object" || Array.isArray(o))
    throw new TraceError(`${where}: not a JSON object`);
  const r = o as Record<string, unknown>;
  if (typeof r.timestamp !== "number" || !Number.isFinite(r.timestamp) || r.timestamp < 0)
    throw new TraceError(`${where}: "timestamp" must be a non-negative number of milliseconds`);
  if (!posInt(r.input_length)) throw new TraceError(`${where}: "input_length" must be a positive integer`);
  if (!posInt(r.output_length)) throw new TraceError(`${where}: "output_length" must be a positive integer`);
  const ids = r.hash_ids ?? [];
  if (!Array.isArray(ids) || !ids.every((h) => typeof h === "number" && Number.isInteger(h) && h >= 0))
    throw new TraceError(`${where}: "hash_ids" must be an array of non-negative integers`);
  if (ids.length > Math.ceil((r.input_length as number) / TRACE_BLOCK_TOKENS))
    throw new TraceError(
      `${where}: ${ids.length} hash_ids of ${TRACE_BLOCK_TOKENS} tokens are more than input_length ${r.input_length} holds`,
    );
  return {
    timestampMs: r.timestamp,
    inputTokens: r.input_length as number,
    outputTokens: r.output_length as number,
    hashIds: ids as number[],
  };
}

export function parseTrace(
  input: string,
  name: string,
  sha256 = createHash("sha256").update(input).digest("hex"),
): Trace {
  const text = withoutBom(input);
  const rows: TraceRow[] = [];
  let lines = 0;
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    lines++;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      throw new TraceError(`${name}: line ${i + 1} is not valid JSON`);
    }
    rows.push(rowOf(o, `${name}: line ${i + 1}`));
  }
  if (rows.length === 0) throw new TraceError(`${name}: no request in it`);
  // The trace's order is its time order (a stable sort keeps ties as written).
  rows.sort((a, b) => a.timestampMs - b.timestampMs);
  const ties = rows.filter((r, i) => i > 0 && r.timestampMs === rows[i - 1]!.timestampMs).length;
  const notices =
    ties > 0
      ? [
          `${name}: ${ties} of ${rows.length} rows share their timestamp with the row before: they are sent at the same moment, in file order`,
        ]
      : [];
  return { name, lines, sha256, rows, ...(notices.length > 0 ? { notices } : {}) };
}

export function loadTrace(path: string): Trace {
  const file = readWorkloadFile(path, (m) => new TraceError(m));
  return parseTrace(file.text, basename(path), file.sha256);
}

/** Which of the trace's requests a level sends: the first `requests`, those before `durationS`. */
export function traceRows(trace: Trace, speed: number, requests: number | null, durationS: number | null) {
  const t0 = trace.rows[0]!.timestampMs;
  let rows = trace.rows.map((r) => ({ row: r, offsetMs: (r.timestampMs - t0) / speed }));
  if (durationS !== null) rows = rows.filter((r) => r.offsetMs < durationS * 1000);
  if (requests !== null) rows = rows.slice(0, requests);
  return rows;
}

/** The mean arrival rate of the replayed part (its level), req/s; one request: 1. */
export function traceRateRps(offsetsMs: readonly number[]): number {
  const span = offsetsMs.length > 1 ? offsetsMs[offsetsMs.length - 1]! - offsetsMs[0]! : 0;
  return span > 0 ? Number((((offsetsMs.length - 1) * 1000) / span).toPrecision(4)) : 1;
}

/**
 * The replayed requests as a dataset in file order with send offsets: each prompt is its blocks'
 * texts (a hash id's block is the same words wherever it appears; a short last block is a prefix
 * of the full one), then its own unique tail (at least the unique tag). Sized by the prompt
 * calibration when there is one (so `input_length` is the server's count), else a word a token.
 */
export function traceDataset(
  trace: Trace,
  o: { speed: number; requests: number | null; durationS: number | null; seed: number; salt?: number },
  calibration: PromptCalibration | null,
): Dataset {
  const rows = traceRows(trace, o.speed, o.requests, o.durationS);
  const blockWords = calibration
    ? Math.max(1, Math.round(TRACE_BLOCK_TOKENS / calibration.tokens_per_word))
    : TRACE_BLOCK_TOKENS;
  const entries: DatasetEntry[] = rows.map(({ row }, i) => {
    // Words as the calibration counts them: a unique tag plus words. The tag goes last here (the
    // blocks must lead, to be shared), so a request's own part is the tail: the tag and a word.
    const words = calibration ? wordsFor(calibration, row.inputTokens) : row.inputTokens;
    let used = 0;
    const parts: string[] = [];
    for (const h of row.hashIds) {
      const n = Math.min(blockWords, words - MIN_TAGGED_WORDS - used);
      if (n <= 0) break;
      parts.push(promptWords(n, (h * 2_654_435_761 + 97 + (o.salt ?? 0) * 1_000_003) >>> 0));
      used += n;
    }
    parts.push(makePrompt(words - used, o.seed, o.seed * 1_000_003 + i, o.salt ?? 0));
    return {
      prompt: parts.join(" "),
      messages: null,
      outputTokens: row.outputTokens,
      promptTokens: row.inputTokens,
    };
  });
  return {
    name: trace.name,
    lines: trace.lines,
    sha256: trace.sha256,
    entries,
    offsetsMs: rows.map((r) => r.offsetMs),
  };
}

/**
 * A sweep's configuration for replaying `trace`: one open-loop level at the replayed part's mean
 * rate, every request of it unless `--requests` or `--duration` cut it (config is updated), and
 * the longest request for the context check; `build` sizes the prompts once calibration is known.
 */
export function traceReplay(
  trace: Trace,
  config: SweepConfig,
  speed: number,
  requests: number | null,
  maxDurationS = Number.POSITIVE_INFINITY,
) {
  config.requests_per_level = requests ?? (config.duration_s === null ? trace.rows.length : null);
  const rows = traceRows(trace, speed, config.requests_per_level, config.duration_s);
  const spanS = (rows[rows.length - 1]?.offsetMs ?? 0) / 1000;
  if (spanS > maxDurationS)
    throw new UsageError(
      `--trace ${trace.name} spans ${spanS.toPrecision(3)} s at --trace-speed ${speed}, over --max-duration-s ${maxDurationS}: replay part of it (--requests, --duration), speed it up, or raise --max-duration-s`,
      "--trace",
    );
  if (rows.length > 1 && spanS === 0)
    throw new UsageError(
      `--trace ${trace.name}: its ${rows.length} replayed rows share one timestamp, so there is no rate to replay (a burst is sent at once, and a rate over no time means nothing): spread the timestamps, or send ${rows.length} requests at once with a closed-loop level (--levels ${rows.length})`,
      "--trace",
    );
  config.levels = [traceRateRps(rows.map((r) => r.offsetMs))];
  config.max_tokens = maxOf(rows.map((r) => r.row.outputTokens));
  config.trace = { name: trace.name, lines: trace.lines, sha256: trace.sha256, speed };
  const longest = rows.reduce((a, r) =>
    r.row.inputTokens + r.row.outputTokens > a.row.inputTokens + a.row.outputTokens ? r : a,
  ).row;
  return {
    longest: { promptTokens: longest.inputTokens, outputTokens: longest.outputTokens },
    build: (calibration: PromptCalibration | null, salt: number) =>
      traceDataset(
        trace,
        { speed, requests: config.requests_per_level, durationS: config.duration_s, seed: config.seed, salt },
        calibration,
      ),
  };
}
