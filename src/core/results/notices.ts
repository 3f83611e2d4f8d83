/**
 * Notices as a person reads them: one line per level at most (a level's notices arrive as the
 * parts of one), each said once, and the self-check's reading of the machine's timing noise said
 * in full once per run and afterwards only when it moved by more than half. The full texts stay
 * in the JSON (levels[].client); the CLI and the Action print through this one writer.
 */
import type { LevelResult, RequestRecord, SweepConfig } from "../../schema/v1.ts";
import { timingNoteMs } from "./report.ts";

/** Between the parts of one level's notice: a mark no notice's own text uses. */
export const PART_SEPARATOR = " · ";

/** A level's notices as one: `level 4: a · b`. */
export const levelNotice = (level: number, parts: readonly string[]): string =>
  `level ${level}: ${parts.join(PART_SEPARATOR)}`;

/**
 * The self-check's finding in one figure and its meaning, for the terminal (the JSON keeps the
 * whole reading: loop delay, its busy part, the send queue, the CPU share).
 */
export function clientNotice(c: NonNullable<LevelResult["client"]>): string | null {
  const bound = c.lateness_bound_ms ?? null;
  const late =
    bound !== null && bound > 0
      ? `up to ${bound.toFixed(1)} ms late`
      : "late by an amount the level was too short to tell";
  if (c.bottleneck_warning)
    return `the client may be the bottleneck: busy with its own work, it read the stream ${late}, so TTFT and ITL may be that much high (more --workers; the figures are under levels[].client)`;
  if (c.timing_note) {
    const ms = timingNoteMs(c.timing_note);
    return ms === null
      ? c.timing_note
      : `timing noise: the client read about ${ms.toFixed(1)} ms late (p99) because the machine woke it late, not from its own work (--workers would not help); TTFT and ITL carry up to that much`;
  }
  return null;
}

/** A writer of notices through `write` (one line each), or a silent one. */
export function noticeWriter(write: (line: string) => void, silent = false): (m: string) => void {
  const seen = new Set<string>();
  let timingMs: number | null = null;
  /** A part as it is shown now, or null when it was said already. */
  const shown = (part: string): string | null => {
    const ms = timingNoteMs(part);
    if (ms === null) return part;
    if (timingMs === null) {
      timingMs = ms;
      return `${part} (said once; each level's reading is in the JSON)`;
    }
    if (Math.abs(ms - timingMs) <= timingMs / 2) return null;
    const was = timingMs;
    timingMs = ms;
    return `timing noise now about ${ms.toFixed(1)} ms (was ${was.toFixed(1)} ms)`;
  };
  return (m) => {
    if (silent || seen.has(m)) return;
    seen.add(m);
    const lv = /^level (\S+): /.exec(m);
    if (lv === null) return write(m);
    const parts = m
      .slice(lv[0].length)
      .split(PART_SEPARATOR)
      .map(shown)
      .filter((p): p is string => p !== null);
    if (parts.length > 0) write(`level ${lv[1]}: ${parts.join("; ")}`);
  };
}

/**
 * Answers shorter than asked with ignore_eos. One with no token at all is not ignore_eos at work
 * (a server that ignores it still writes until it stops): it is named apart, with its finish
 * reason and a request to look at.
 */
export function shortOutputText(
  measured: readonly RequestRecord[],
  short: number,
  ok: number,
  cfg: SweepConfig,
): string {
  const empty = measured.filter((r) => r.short_output === true && r.usage?.completion_tokens === 0);
  const parts: string[] = [];
  if (short > empty.length)
    parts.push(
      `${short - empty.length} of ${ok} answers stopped short of the ${cfg.max_tokens} tokens asked with ignore_eos (the server ignored it; check that it honours ignore_eos: vLLM, SGLang and llama.cpp do)`,
    );
  if (empty.length > 0) {
    const reasons = [...new Set(empty.map((r) => r.finish_reason ?? "none"))].slice(0, 3).join(", ");
    parts.push(
      `${empty.length} of ${ok} answers counted 0 output tokens in their usage (finish_reason ${reasons}; request ${empty[0]!.id}), which ignore_eos does not explain (a server that ignores it still writes until it stops): check that server's usage counts and what ended those answers`,
    );
  }
  return `${parts.join("; ")}: this is not the workload asked for, so the level is not valid and compare judges none of its rows`;
}

/**
 * What the server did not say of its own times across a run, in one line (null: it said enough):
 * a TTFT or E2E change can be split only from what it said (ttft-split.ts, server-means.ts).
 */
export function splitNotice(levels: readonly LevelResult[], metricsSampled: boolean): string | null {
  if (levels.length === 0) return null;
  if (levels.some((l) => l.ttft_split))
    return levels.some((l) => l.e2e_split)
      ? null
      : "why it moved: the server's streams carry its prompt time but no decode time (llama.cpp's timings.predicted_ms): an E2E change is split only by /metrics, if at all";
  const m = levels.find((l) => l.server_means)?.server_means;
  if (!m)
    return `why it moved: the server said nothing of its own times: its streams carry no per-request timings (llama.cpp's \`timings\`) and ${metricsSampled ? "its /metrics export no phase histograms (vLLM's queue, prefill and decode times)" : "its /metrics were not sampled (--metrics-interval-ms 0)"}, so a TTFT or E2E change will read "cannot split"`;
  const missing = (["queue", "prefill", "decode"] as const).filter((p) => m[`${p}_ms`] === null);
  return missing.length > 0
    ? `why it moved: the server's /metrics have no ${missing.join(" or ")} time histogram, so a TTFT or E2E change is split only where both sides have every part (none is guessed)`
    : null;
}
