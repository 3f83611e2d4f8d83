/**
 * Why a TTFT or an E2E is what it is: each request's time split into the server's own prompt time
 * (its prefill and first token, llama.cpp's `timings.prompt_ms`), for E2E its own decode time
 * (`timings.predicted_ms`: first token to last), the client's lateness in reading what arrived
 * (the level's median, from its self-check) and the rest, the time before the server began the
 * prompt: its queue and the transport. Read where the server says its prompt time, else absent
 * (nothing is guessed). A percentile's parts are the mean parts of the requests ranked around it
 * (40–60 % for p50, 90–100 % for p95), scaled so they sum to the percentile itself. Pure.
 */
import type { LevelResult, RequestRecord } from "../../schema/v1.ts";
import { deriveRequest } from "./metrics.ts";

type Split = NonNullable<LevelResult["ttft_split"]>;
type Parts = Split["p50"];
type E2eSplit = NonNullable<LevelResult["e2e_split"]>;
type TpotSplit = NonNullable<LevelResult["tpot_split"]>;
type E2eParts = E2eSplit["p50"];

const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;

/** The server's prompt time of a request and the prompt tokens it processed, where its stream said. */
export function serverPrompt(r: RequestRecord): { promptMs: number; uncached: number | null } | null {
  const t = r.server_timings;
  if (!finite(t?.prompt_ms)) return null;
  return { promptMs: t.prompt_ms, uncached: finite(t?.prompt_n) ? t.prompt_n : null };
}

interface Row {
  ttftMs: number;
  e2eMs: number | null;
  tpotMs: number | null;
  /** Output tokens after the first (TPOT's divisor). */
  gaps: number | null;
  promptMs: number;
  /** The server's decode time, capped at what the client saw between first token and last. */
  decodeMs: number | null;
  uncached: number | null;
}

const meanOf = (band: readonly Row[], f: (r: Row) => number) =>
  band.reduce((a, r) => a + f(r), 0) / band.length;

function uncachedOf(band: readonly Row[]): number | null {
  const known = band.filter((r) => r.uncached !== null);
  return known.length > 0 ? known.reduce((a, r) => a + r.uncached!, 0) / known.length : null;
}

/** A band's TTFT parts, scaled to `value` (the percentile the level reports), or to the band's mean without one. */
function partsOf(band: readonly Row[], value: number | null, clientLateMs: number): Parts {
  const ttft = meanOf(band, (r) => r.ttftMs);
  const prompt = meanOf(band, (r) => r.promptMs);
  const client = Math.min(Math.max(0, ttft - prompt), clientLateMs);
  const scale = value !== null && ttft > 0 ? value / ttft : 1;
  return {
    n: band.length,
    queue_ms: (ttft - prompt - client) * scale,
    prefill_ms: prompt * scale,
    client_ms: client * scale,
    uncached_tokens: uncachedOf(band),
  };
}

/**
 * A band's E2E parts: TTFT's parts, the server's decode, and the stream's own remainder (first
 * token to last beyond the server's decode: the client reading late and the transport) added to
 * the client's part; scaled to `value`.
 */
function e2ePartsOf(band: readonly Row[], value: number | null, clientLateMs: number): E2eParts {
  const t = partsOf(band, null, clientLateMs);
  const e2e = meanOf(band, (r) => r.e2eMs!);
  const decode = meanOf(band, (r) => r.decodeMs!);
  const tail = Math.max(0, e2e - meanOf(band, (r) => r.ttftMs) - decode);
  const scale = value !== null && e2e > 0 ? value / e2e : 1;
  return {
    n: band.length,
    queue_ms: t.queue_ms! * scale,
    prefill_ms: t.prefill_ms! * scale,
    decode_ms: decode * scale,
    client_ms: (t.client_ms! + tail) * scale,
    uncached_tokens: t.uncached_tokens,
  };
}

/** The window's successful requests whose stream carried the server's prompt time, as rows. */
function rowsOf(records: readonly RequestRecord[]): Row[] {
  const rows: Row[] = [];
  for (const r of records) {
    if (r.warmup || r.error !== null) continue;
    const d = deriveRequest(r);
    const s = serverPrompt(r);
    if (d.ttftMs === null || s === null) continue;
    const predicted = r.server_timings?.predicted_ms;
    const decodeMs =
      finite(predicted) && d.e2eMs !== null ? Math.min(predicted, Math.max(0, d.e2eMs - d.ttftMs)) : null;
    rows.push({
      ttftMs: d.ttftMs,
      e2eMs: d.e2eMs,
      tpotMs: d.tpotMs,
      gaps: r.usage?.completion_tokens != null ? r.usage.completion_tokens - 1 : null,
      promptMs: Math.min(s.promptMs, d.ttftMs),
      decodeMs,
      uncached: s.uncached,
    });
  }
  return rows;
}

/** The bands a level's p50 and p95 are read around, from rows sorted by `key`. */
function bands(rows: Row[], key: (r: Row) => number) {
  rows.sort((a, b) => key(a) - key(b));
  const band = (lo: number, hi: number) => {
    const from = Math.min(rows.length - 1, Math.floor(lo * rows.length));
    return rows.slice(from, Math.max(from + 1, Math.ceil(hi * rows.length)));
  };
  return { p50: band(0.4, 0.6), p95: band(0.9, 1) };
}

/**
 * The split of a level's TTFT p50 and p95 from its window's requests (those its TTFT figures come
 * from), or undefined when none carried the server's prompt time. A prompt time longer than the
 * TTFT the client measured (clocks that differ) counts as the whole TTFT: no part is negative.
 */
export function ttftSplit(
  records: readonly RequestRecord[],
  ttft: Pick<LevelResult["ttft_ms"], "p50" | "p95">,
  clientLateMs: number | null,
): Split | undefined {
  const rows = rowsOf(records);
  if (rows.length === 0) return undefined;
  const late = Math.max(0, clientLateMs ?? 0);
  const b = bands(rows, (r) => r.ttftMs);
  return {
    source: "server_timings",
    requests: rows.length,
    p50: partsOf(b.p50, ttft.p50, late),
    p95: partsOf(b.p95, ttft.p95, late),
  };
}

/**
 * The split of a level's E2E p50 and p95 (queue, prefill, decode, client), from the requests whose
 * stream carried both the server's prompt and decode times, or undefined when none did.
 */
export function e2eSplit(
  records: readonly RequestRecord[],
  e2e: Pick<LevelResult["e2e_ms"], "p50" | "p95">,
  clientLateMs: number | null,
): E2eSplit | undefined {
  const rows = rowsOf(records).filter((r) => r.e2eMs !== null && r.decodeMs !== null);
  if (rows.length === 0) return undefined;
  const late = Math.max(0, clientLateMs ?? 0);
  const b = bands(rows, (r) => r.e2eMs!);
  return {
    source: "server_timings",
    requests: rows.length,
    p50: e2ePartsOf(b.p50, e2e.p50, late),
    p95: e2ePartsOf(b.p95, e2e.p95, late),
  };
}

/**
 * The split of a level's TPOT p50 into the server's own time per output token (its decode time
 * over the tokens after the first) and the client's (the rest: reading late, the transport), from
 * the requests whose stream carried the server's decode time, or undefined when none did.
 */
export function tpotSplit(
  records: readonly RequestRecord[],
  tpot: Pick<LevelResult["tpot_ms"], "p50">,
): TpotSplit | undefined {
  const rows = rowsOf(records).filter((r) => r.tpotMs !== null && r.decodeMs !== null && (r.gaps ?? 0) >= 1);
  if (rows.length === 0) return undefined;
  const band = bands(rows, (r) => r.tpotMs!).p50;
  const mean = meanOf(band, (r) => r.tpotMs!);
  const server = Math.min(
    mean,
    meanOf(band, (r) => r.decodeMs! / r.gaps!),
  );
  const scale = tpot.p50 !== null && mean > 0 ? tpot.p50 / mean : 1;
  return {
    source: "server_timings",
    requests: rows.length,
    p50: { n: band.length, decode_ms: server * scale, client_ms: (mean - server) * scale },
  };
}
