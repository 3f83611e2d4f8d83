/**
 * Whether a level's figures are what they claim (CONCEPTS.md "Valid runs"), computed once here and
 * read by every surface: each rule, the figure it read, the bound it broke, and the measures it
 * leaves without a verdict (families of shared/measures.ts, or measure names). A level with any
 * reason but those of some rows only (too few samples for a percentile, a telemetry gap) is
 * invalid, and so is its run: an invalid run is never judged and never enters a base history.
 */

import type {
  LevelResult,
  LevelValidity,
  RequestRecord,
  SweepConfig,
  ValidityReason,
} from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import { RELEASE_BOUND_MS } from "../server/release-check.ts";

/** Lateness a shared CI runner shows under ordinary load: below it the client is not the problem. */
export const CLIENT_LATE_FLOOR_MS = 20;
/** A client is bound when its lateness is this share of the ITL p50, or this share of the TTFT p50. */
export const CLIENT_LATE_ITL_SHARE = 0.5;
export const CLIENT_LATE_TTFT_SHARE = 0.2;
/** Failed requests above this share leave the survivors' figures unlike the workload's. */
export const ERROR_SHARE_BOUND = 0.05;
/** With ignore_eos: mean output under this share of what was asked is another workload. */
export const OUTPUT_SHARE_BOUND = 0.9;
/** Open loop: an achieved rate off the target by more than this share (or 3/√n, the count's own noise). */
export const RATE_OFF_BOUND = 0.1;

/**
 * A percentile needs at least this many samples for its distribution-free 95 % upper confidence
 * bound to exist at all (the sample's maximum covers the q-quantile with probability 1 − q^n ≥ 0.95):
 * n ≥ ln 0.05 / ln q, 299 for a p99, 59 for a p95.
 */
export function samplesNeeded(q: number): number {
  return Math.ceil(Math.log(0.05) / Math.log(q));
}

const TIMING = ["latency", "rate", "slo"];
const FIGURES = ["latency", "rate", "slo", "tokens", "gpu"];

/** The percentile measures of each of a level's sample families, and the quantile each is. */
const PERCENTILES: { stats: keyof LevelResult; of: [string, number][] }[] = [
  {
    stats: "ttft_ms",
    of: [
      ["ttft_p95_ms", 0.95],
      ["ttft_p99_ms", 0.99],
    ],
  },
  { stats: "itl_ms", of: [["itl_p95_ms", 0.95]] },
  { stats: "e2e_ms", of: [["e2e_p95_ms", 0.95]] },
  {
    stats: "ttfat_ms",
    of: [
      ["ttfat_p95_ms", 0.95],
      ["ttfat_p99_ms", 0.99],
    ],
  },
];

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** The level's reasons, in the order the rules are listed in CONCEPTS.md. */
/**
 * `askedTokens`: the mean output its successful requests asked for (each its own max_tokens: a
 * dataset's, a trace's or an agent session's lengths differ); absent: --max-tokens.
 */
export function levelReasons(
  l: LevelResult,
  cfg: SweepConfig,
  cacheNote: string | null,
  askedTokens: number = cfg.max_tokens,
  busyUsers: number = l.peak_in_flight,
): ValidityReason[] {
  const out: ValidityReason[] = [];
  const add = (
    code: ValidityReason["code"],
    affects: string[],
    figure: number | null,
    bound: number | null,
    text: string,
  ) => out.push({ code, affects, figure, bound, text });
  // The client: its p99 lateness estimate (the self-check's), against what it would distort.
  const delay = l.client.event_loop_delay_ms.p99;
  const itl = l.itl_ms.p50;
  const ttft = l.ttft_ms.p50;
  if (delay !== null && (itl !== null || ttft !== null)) {
    const late = 2 * delay + 1;
    const floor = cfg.client_late_floor_ms ?? CLIENT_LATE_FLOOR_MS;
    const bound = Math.max(
      floor,
      Math.min(
        itl !== null ? CLIENT_LATE_ITL_SHARE * itl : Number.POSITIVE_INFINITY,
        ttft !== null ? CLIENT_LATE_TTFT_SHARE * ttft : Number.POSITIVE_INFINITY,
      ),
    );
    if (late > bound)
      add(
        "client_bound",
        TIMING,
        late,
        bound,
        `client-bound: it read what the server sent up to about ${fmt(late)} ms late (p99), over ${fmt(bound)} ms (half the ITL p50 or a fifth of the TTFT p50, at least ${floor} ms)${l.client.bottleneck_warning ? "; its own work was the cause (more --workers)" : "; the machine woke it late (a quieter runner)"}`,
      );
  }
  const queue = l.client.send_queue_ms?.p99 ?? null;
  const queueBound = Math.max(
    cfg.client_late_floor_ms ?? CLIENT_LATE_FLOOR_MS,
    CLIENT_LATE_TTFT_SHARE * (ttft ?? 0),
  );
  if (queue !== null && ttft !== null && queue > queueBound)
    add(
      "client_bound",
      TIMING,
      queue,
      queueBound,
      `client-bound: requests waited ${fmt(queue)} ms (p99) in the client before their socket write, over a fifth of the TTFT p50 (more --workers)`,
    );
  const s = l.steady_state;
  if (s?.fell_behind)
    add(
      "fell_behind",
      FIGURES,
      s.completed_rps,
      l.level,
      `the server fell behind: ${s.reason.replace(/^the server fell behind: /, "")}`,
    );
  else if (s && !s.steady && l.requests > 0)
    add("no_steady_state", FIGURES, s.window_s, s.min_steady_s, `no steady state: ${s.reason}`);
  if (l.requests > 0 && l.errors / l.requests > ERROR_SHARE_BOUND)
    add(
      "error_rate",
      [...FIGURES],
      l.errors / l.requests,
      ERROR_SHARE_BOUND,
      `${l.errors} of ${l.requests} requests failed (over ${100 * ERROR_SHARE_BOUND} %): the rest are not the workload's figures`,
    );
  if (cfg.ignore_eos && l.ok > 0 && askedTokens > 0) {
    const mean = l.completion_tokens_total / l.ok;
    if (mean < OUTPUT_SHARE_BOUND * askedTokens)
      add(
        "short_output",
        [...FIGURES],
        mean,
        OUTPUT_SHARE_BOUND * askedTokens,
        `outputs shorter than asked: ${fmt(mean)} tokens on average for ${fmt(askedTokens)} asked with ignore_eos (the server stopped early)`,
      );
  }
  if (cacheNote !== null) add("cache_unasked", ["latency", "rate", "slo"], null, null, cacheNote);
  const ol = l.open_loop;
  if (ol && ol.achieved_rate_rps !== null && ol.target_rate_rps > 0) {
    const off = Math.abs(ol.achieved_rate_rps / ol.target_rate_rps - 1);
    const bound = Math.max(RATE_OFF_BOUND, 3 / Math.sqrt(Math.max(1, l.requests)));
    if (off > bound)
      add(
        "load_shape",
        [...FIGURES],
        ol.achieved_rate_rps,
        ol.target_rate_rps,
        `the load was not the one asked: ${fmt(ol.achieved_rate_rps)} req/s sent for ${fmt(ol.target_rate_rps)} (off by ${(100 * off).toFixed(0)} %, over ${(100 * bound).toFixed(0)} %)`,
      );
  } else if (l.mode === "closed" && l.requests >= l.level && busyUsers < l.level)
    // a user waiting on a tool or thinking before its next call is one of the load's users
    add(
      "load_shape",
      [...FIGURES],
      busyUsers,
      l.level,
      `the load was not the one asked: at most ${busyUsers} of ${l.level} users had a request in flight${busyUsers > l.peak_in_flight ? " or waited before one (a tool's run, think time)" : ""}`,
    );
  for (const p of PERCENTILES) {
    const st = l[p.stats] as { n: number } | undefined;
    if (!st || st.n === 0) continue;
    for (const [measure, q] of p.of)
      if (st.n < samplesNeeded(q))
        add(
          "too_few_samples",
          [measure],
          st.n,
          samplesNeeded(q),
          `p${Math.round(q * 100)} needs ≥ ${samplesNeeded(q)} samples (has ${st.n})`,
        );
  }
  return out;
}

/**
 * A level's validity once its GPU figures are attached (they come after its summary, from the
 * sampler that ran beside it): a level whose GPU figures are unknown has a telemetry gap, which
 * leaves its GPU rows without a verdict and the rest valid.
 */
export function withGpuValidity(l: LevelResult): LevelValidity {
  const reasons = (l.validity?.reasons ?? []).filter((r) => r.code !== "telemetry_gap");
  if (l.gpu?.unknown_reason)
    reasons.push({
      code: "telemetry_gap",
      affects: ["gpu"],
      figure: null,
      bound: null,
      text: `GPU figures unknown: ${l.gpu.unknown_reason}`,
    });
  return levelValidity(reasons);
}

/**
 * `--cancel-share`: the server still held requests the client had aborted, the bound after the
 * level: whatever came after it ran on a server with less room than it says.
 */
export function withLeakValidity(l: LevelResult): LevelValidity {
  const reasons = (l.validity?.reasons ?? []).filter((r) => r.code !== "leak");
  const rel = l.cancelled?.release;
  if (rel && rel.busy !== null && rel.busy > 0)
    reasons.push({
      code: "leak",
      affects: [...FIGURES],
      figure: rel.busy,
      bound: 0,
      text: `leak: ${rel.busy} ${rel.source === "slots" ? "slots" : "requests"} still busy ${(RELEASE_BOUND_MS / 1000).toFixed(0)} s after the level (${l.cancelled!.requests} of its streams were cancelled by the client): the server did not free what they held, so every later level ran with less room than it has`,
    });
  const p = l.cancelled?.probe;
  if (p && p.before_ms !== null && p.bound_ms !== null) {
    const slower = p.after_ms === null ? null : p.after_ms - p.before_ms;
    if (slower === null || slower > p.bound_ms)
      reasons.push({
        code: "leak",
        affects: [...FIGURES],
        figure: slower,
        bound: p.bound_ms,
        text: `leak: ${p.after_ms === null ? "a probe after the level got no first token" : `an idle request's time to first token was ${p.after_ms.toFixed(1)} ms after the level, ${p.before_ms.toFixed(1)} ms before it (more than the ${p.bound_ms.toFixed(1)} ms its noise allows)`}: the server is slower for what the ${l.cancelled!.requests} cancelled streams left behind${rel?.busy === 0 ? ", though it says nothing is busy" : ""}, so every later level ran on a slower server`,
      });
  }
  return levelValidity(reasons);
}

/** Reasons of some rows only: the level stays valid for the rest. */
const ROWS_ONLY = new Set<ValidityReason["code"]>(["too_few_samples", "telemetry_gap", "buffered_stream"]);

/** A gap under this is two events of one read (the client stamps each read once). */
const SAME_READ_MS = 0.05;

/**
 * How a level's streams arrived, when not token by token: in one piece (the median request had a
 * single event carrying 4 tokens or more: a server that sends the whole answer at once), or in
 * bursts (most gaps under 0.05 ms: a buffering proxy releasing many events per read). Either way
 * the per-token figures it makes meaningless (ITL, and TPOT and decode speed where the stream's
 * span is itself about zero) are withheld, as a reason of those rows only.
 */
export function streamBuffering(
  records: readonly RequestRecord[],
): { reason: ValidityReason; withhold: ("itl_ms" | "tpot_ms" | "decode_tok_s")[] } | null {
  const ok = records.filter((r) => !r.warmup && r.error === null && r.event_times_ms.length > 0);
  if (ok.length === 0) return null;
  const events = ok.map((r) => r.event_times_ms.length).sort((a, b) => a - b);
  const medianEvents = events[Math.floor(events.length / 2)]!;
  const tokens = ok.map((r) => r.usage?.completion_tokens ?? 0).sort((a, b) => a - b);
  const medianTokens = tokens[Math.floor(tokens.length / 2)]!;
  const per = ["itl_p50_ms", "itl_p95_ms", "tpot_p50_ms", "decode_tps"];
  if (medianEvents === 1 && medianTokens >= 4)
    return {
      reason: {
        code: "buffered_stream",
        affects: per,
        figure: medianTokens,
        bound: 1,
        text: `the streams arrived in one piece: one event carried all ${medianTokens} tokens (median), so there is no time between tokens to measure (a server that sends the whole answer at once, or a proxy that buffers it)`,
      },
      withhold: ["itl_ms", "tpot_ms", "decode_tok_s"],
    };
  let gaps = 0;
  let same = 0;
  let spanZero = 0;
  for (const r of ok) {
    const t = r.event_times_ms;
    for (let k = 1; k < t.length; k++) {
      gaps++;
      if (t[k]! - t[k - 1]! < SAME_READ_MS) same++;
    }
    if (t.length > 1 && t[t.length - 1]! - t[0]! < SAME_READ_MS) spanZero++;
  }
  if (gaps === 0 || same / gaps <= 0.5) return null;
  const share = same / gaps;
  const perRead = gaps / Math.max(1, gaps - same + ok.length);
  return {
    reason: {
      code: "buffered_stream",
      affects: spanZero * 2 > ok.length ? per : ["itl_p50_ms", "itl_p95_ms"],
      figure: share,
      bound: 0.5,
      text: `the streams arrived in bursts: ${(100 * share).toFixed(0)} % of the gaps between events were under ${SAME_READ_MS} ms, about ${perRead.toFixed(1)} events per read (a buffering proxy, or a client too busy to read each as it came), so ITL reads near 0 and says nothing of the server`,
    },
    withhold: spanZero * 2 > ok.length ? ["itl_ms", "tpot_ms", "decode_tok_s"] : ["itl_ms"],
  };
}

/**
 * A level invalid only because its client read late: that lateness (ms, the largest figure of its
 * client-bound reasons), else null. What the client's lateness can and cannot have done to a figure
 * is the reader's to charge (the agent-capacity search charges it; its headline names it).
 */
export function clientOnlyLateMs(l: LevelResult): number | null {
  const blocking = (l.validity?.reasons ?? []).filter((r) => !ROWS_ONLY.has(r.code));
  if (blocking.length === 0 || !blocking.every((r) => r.code === "client_bound")) return null;
  return maxOf(blocking.map((r) => r.figure ?? Number.POSITIVE_INFINITY));
}

export function levelValidity(reasons: readonly ValidityReason[]): LevelValidity {
  return { status: reasons.some((r) => !ROWS_ONLY.has(r.code)) ? "invalid" : "valid", reasons: [...reasons] };
}

/** A run is valid when every level is; its reasons name their level. */
export function runValidity(
  levels: readonly LevelResult[],
): NonNullable<import("../../schema/v1.ts").ResultDocument["validity"]> {
  const reasons = levels.flatMap((l) =>
    (l.validity?.reasons ?? [])
      .filter((r) => !ROWS_ONLY.has(r.code))
      .map((r) => ({ level: l.level, code: r.code, text: r.text })),
  );
  return { status: reasons.length > 0 ? "invalid" : "valid", reasons };
}
