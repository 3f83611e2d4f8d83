/**
 * Why a TTFT is what it is: each request's TTFT split into the server's own prompt time (its
 * prefill and first token, llama.cpp's `timings.prompt_ms`), the client's lateness in reading what
 * arrived (the level's median, from its self-check) and the rest, the time before the server began
 * the prompt: its queue and the transport. Read where the server says its prompt time, else absent
 * (nothing is guessed). A percentile's parts are the mean parts of the requests ranked around it
 * (40–60 % for p50, 90–100 % for p95), scaled so they sum to the percentile itself. Pure.
 */
import type { LevelResult, RequestRecord } from "../../schema/v1.ts";
import { deriveRequest } from "./metrics.ts";

type Split = NonNullable<LevelResult["ttft_split"]>;
type Parts = Split["p50"];

/** The server's prompt time of a request and the prompt tokens it processed, where its stream said. */
export function serverPrompt(r: RequestRecord): { promptMs: number; uncached: number | null } | null {
  const t = r.server_timings;
  const ms = t?.prompt_ms;
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return null;
  const n = t?.prompt_n;
  return { promptMs: ms, uncached: typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : null };
}

interface Row {
  ttftMs: number;
  promptMs: number;
  uncached: number | null;
}

/** A band's parts, scaled to `value` (the percentile the level reports), or to the band's mean without one. */
function partsOf(band: readonly Row[], value: number | null, clientLateMs: number): Parts {
  const mean = (f: (r: Row) => number) => band.reduce((a, r) => a + f(r), 0) / band.length;
  const ttft = mean((r) => r.ttftMs);
  const prompt = mean((r) => r.promptMs);
  const client = Math.min(Math.max(0, ttft - prompt), clientLateMs);
  const scale = value !== null && ttft > 0 ? value / ttft : 1;
  const known = band.filter((r) => r.uncached !== null);
  return {
    n: band.length,
    queue_ms: (ttft - prompt - client) * scale,
    prefill_ms: prompt * scale,
    client_ms: client * scale,
    uncached_tokens: known.length > 0 ? known.reduce((a, r) => a + r.uncached!, 0) / known.length : null,
  };
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
  const rows: Row[] = [];
  for (const r of records) {
    if (r.warmup || r.error !== null) continue;
    const t = deriveRequest(r).ttftMs;
    const s = serverPrompt(r);
    if (t === null || s === null) continue;
    rows.push({ ttftMs: t, promptMs: Math.min(s.promptMs, t), uncached: s.uncached });
  }
  if (rows.length === 0) return undefined;
  rows.sort((a, b) => a.ttftMs - b.ttftMs);
  const band = (lo: number, hi: number) => {
    const from = Math.min(rows.length - 1, Math.floor(lo * rows.length));
    return rows.slice(from, Math.max(from + 1, Math.ceil(hi * rows.length)));
  };
  const late = Math.max(0, clientLateMs ?? 0);
  return {
    source: "server_timings",
    requests: rows.length,
    p50: partsOf(band(0.4, 0.6), ttft.p50, late),
    p95: partsOf(band(0.9, 1), ttft.p95, late),
  };
}
