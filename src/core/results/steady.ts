/**
 * The steady-state window of a level: the stretch in which the load was what the level says.
 * A level's first requests meet an empty server (the ramp) and its last ones an emptying server
 * (the drain); averaged in, they shift throughput and latency by the share of the level they
 * take, so headline figures come from the window only, and a level without one says so.
 *
 * Closed loop (N users): from the moment the level is full (the N-th user has sent) to the moment
 * the first user stops (the first end after the last send: from then on fewer than N are in
 * flight). Open loop (rate λ): from one median E2E after the first arrival (by Little's law the
 * number in flight has then reached λ × E2E) to the last arrival (then the drain begins).
 *
 * A window is steady when it lasts at least `minSteadyS` (default: 5 s, or half the level when
 * the level is shorter than 10 s, never under 1 s) and at least two median E2E (so it spans whole request cycles,
 * not one fill and one drain), and, open loop, the server kept up: as many requests finished
 * inside it as arrived in it, give or take the arrival process's own noise (arrivalNoise).
 * Otherwise: "no steady state", with the reason.
 */
import type { LevelResult, RequestRecord, SloConfig } from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import { deriveRequest, meetsSlo } from "./metrics.ts";

export const DEFAULT_MIN_STEADY_S = 5;
/** Whatever the level's length, a window shorter than this is no steady state by default. */
export const FLOOR_MIN_STEADY_S = 1;

export interface SteadyWindow {
  steady: boolean;
  startMs: number | null;
  endMs: number | null;
  windowS: number;
  minSteadyS: number;
  /** Requests that started and ended inside the window (their latencies are the headline's). */
  inside: RequestRecord[];
  /** Started before the window (the ramp) / ended after it (the drain), counted and kept. */
  ramp: number;
  drain: number;
  /** Open loop: requests finished inside the window per second (the rate the server sustained). */
  completedRps: number | null;
  /** Open loop: the queue grew through the window (fewer finished than arrived, beyond the noise). */
  fellBehind: boolean;
  reason: string;
}

/**
 * How many fewer requests may finish in a window than arrived in it without the queue having
 * grown: two standard deviations of the arrival count (Poisson: sqrt(n); gamma with shape k:
 * sqrt(n / k)), and for even arrivals 2 % (the requests in flight at the window's two ends
 * differ by a few), two requests at least.
 */
export function arrivalNoise(
  arrived: number,
  arrival: "poisson" | "constant" | "gamma",
  burstiness: number,
): number {
  if (arrival === "constant") return Math.max(2, 0.02 * arrived);
  const k = arrival === "gamma" ? burstiness : 1;
  return Math.max(2, 2 * Math.sqrt(arrived / k));
}

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function steadyWindow(
  records: readonly RequestRecord[],
  o: {
    mode: "closed" | "open";
    level: number;
    minSteadyS: number | null;
    /** Open loop: the arrival process, whose own count noise the kept-up check allows. */
    arrival?: "poisson" | "constant" | "gamma";
    burstiness?: number;
  },
): SteadyWindow {
  const recs = records.filter((r) => !r.warmup).sort((a, b) => a.send_ms - b.send_ms);
  const ends = recs.map((r) => r.end_ms ?? r.send_ms);
  const first = recs[0]?.send_ms ?? 0;
  const lastEnd = maxOf(ends);
  const levelS = recs.length > 0 ? (lastEnd - first) / 1000 : 0;
  // The default: 5 s, or half a level shorter than 10 s, but never under the 1 s floor (a window of
  // a few hundred ms holds a handful of request lifetimes, not a steady load).
  const minSteadyS =
    o.minSteadyS ??
    Math.max(
      FLOOR_MIN_STEADY_S,
      Math.min(DEFAULT_MIN_STEADY_S, levelS < 10 ? levelS / 2 : DEFAULT_MIN_STEADY_S),
    );
  const none = (reason: string): SteadyWindow => ({
    steady: false,
    startMs: null,
    endMs: null,
    windowS: 0,
    minSteadyS,
    inside: [],
    ramp: 0,
    drain: 0,
    completedRps: null,
    fellBehind: false,
    reason,
  });
  if (recs.length < 2) return none("fewer than two requests");
  const e2e = median(
    recs.filter((r) => r.error === null && r.end_ms !== null).map((r) => r.end_ms! - r.send_ms),
  );
  if (e2e === null) return none("no request succeeded");
  const lastSend = recs[recs.length - 1]!.send_ms;
  let start: number;
  let end: number;
  if (o.mode === "closed") {
    const users = Math.min(o.level, recs.length);
    start = recs[users - 1]!.send_ms;
    let firstStop = Number.POSITIVE_INFINITY;
    for (const t of ends) if (t > lastSend && t < firstStop) firstStop = t;
    end = Number.isFinite(firstStop) ? firstStop : lastEnd;
  } else {
    start = first + e2e;
    end = maxOf(recs.map((r) => r.intended_send_ms ?? r.send_ms));
  }
  const windowS = Math.max(0, end - start) / 1000;
  const inside = recs.filter((r) => r.send_ms >= start && (r.end_ms ?? r.send_ms) <= end);
  const ramp = recs.filter((r) => r.send_ms < start).length;
  const drain = recs.filter((r) => r.send_ms >= start && (r.end_ms ?? r.send_ms) > end).length;
  const finished = ends.filter((t) => t > start && t <= end).length;
  const completedRps = o.mode === "open" && windowS > 0 ? finished / windowS : null;
  const w = {
    startMs: start,
    endMs: end,
    windowS,
    minSteadyS,
    inside,
    ramp,
    drain,
    completedRps,
    fellBehind: false,
  };
  const fmt = (x: number) => x.toFixed(x < 10 ? 2 : 1);
  // Open loop, a server far behind: its queue (so each request's E2E) grows all level, until the
  // window, which starts one median E2E after the first arrival, is empty. Judged over the whole
  // arrival span first: fewer finished than arrived beyond the arrival count's noise, and the last
  // quarter's E2E at least 1.5 times the first quarter's (requests merely in flight at the end
  // raise neither).
  if (o.mode === "open") {
    const spanEnd = maxOf(recs.map((r) => r.intended_send_ms ?? r.send_ms));
    const doneAt = ends.filter((t) => t > first && t <= spanEnd).sort((a, b) => a - b);
    const done = doneAt.length;
    // What it finished per second while saturated: the slope of completions over time in the span
    // (the first lifetime, before anything could finish, is not the server's pace).
    const pace = done >= 3 ? paceRps(doneAt) : null;
    const q = Math.max(2, Math.floor(recs.length / 4));
    const e2eOf = (xs: readonly RequestRecord[]) =>
      median(xs.filter((r) => r.error === null && r.end_ms !== null).map((r) => r.end_ms! - r.send_ms));
    const early = e2eOf(recs.slice(0, q));
    const late = e2eOf(recs.slice(-q));
    const spanS = (spanEnd - first) / 1000;
    if (
      early !== null &&
      late !== null &&
      late >= 1.5 * early &&
      recs.length - done > arrivalNoise(recs.length, o.arrival ?? "poisson", o.burstiness ?? 1)
    )
      return {
        ...w,
        steady: false,
        fellBehind: true,
        completedRps: pace ?? (spanS > 0 ? done / spanS : null),
        reason: `the server fell behind: ${done} requests finished in the ${fmt(spanS)} s they arrived over while ${recs.length} arrived, and E2E rose from ${fmt(early / 1000)} s to ${fmt(late / 1000)} s (its queue grew all level)`,
      };
  }
  if (windowS < minSteadyS)
    return {
      ...w,
      steady: false,
      reason: `the window lasted ${fmt(windowS)} s, under the ${fmt(minSteadyS)} s asked (--min-steady-s)`,
    };
  if (windowS < (2 * e2e) / 1000)
    return {
      ...w,
      steady: false,
      reason: `the window lasted ${fmt(windowS)} s, under two request lifetimes (median E2E ${fmt(e2e / 1000)} s): the level filled and drained without a steady stretch between`,
    };
  if (inside.length === 0)
    return { ...w, steady: false, reason: "no request started and ended inside the window" };
  if (o.mode === "open") {
    const arrived = recs.filter((r) => {
      const t = r.intended_send_ms ?? r.send_ms;
      return t >= start && t <= end;
    }).length;
    if (arrived - finished > arrivalNoise(arrived, o.arrival ?? "poisson", o.burstiness ?? 1))
      return {
        ...w,
        steady: false,
        fellBehind: true,
        reason: `the server fell behind: ${finished} requests finished in the ${fmt(windowS)} s window while ${arrived} arrived (its queue grew all level)`,
      };
  }
  return { ...w, steady: true, reason: "steady" };
}

/** A successful request's output tokens received in [startMs, endMs]: each content event carries completion_tokens / events. */
export function tokensInWindow(r: RequestRecord, startMs: number, endMs: number): number {
  const ev = r.event_times_ms;
  if (ev.length === 0) return 0;
  let n = 0;
  for (const t of ev) if (t >= startMs && t <= endMs) n++;
  return (n * (r.usage?.completion_tokens ?? 0)) / ev.length;
}

/**
 * A steady level's rates, from what happened inside its window over its length: tokens received
 * in it (each content event carries its request's completion_tokens / events), successful
 * requests that finished in it, and of those the ones within every SLO (goodput: the drain
 * after the window is not counted).
 */
export function windowRates(
  records: readonly RequestRecord[],
  w: SteadyWindow,
  slo: SloConfig,
  openLoop: boolean,
): Pick<LevelResult, "output_tok_s" | "total_tok_s" | "req_s" | "goodput_req_s"> {
  const start = w.startMs!;
  const end = w.endMs!;
  let tokens = 0;
  let prompt = 0;
  let done = 0;
  let good = 0;
  const anySlo = slo.ttft_ms !== null || slo.tpot_ms !== null || slo.e2e_ms !== null || slo.ttfat_ms != null;
  for (const r of records) {
    if (r.warmup || r.error !== null) continue;
    tokens += tokensInWindow(r, start, end);
    const e = r.end_ms ?? r.send_ms;
    if (e > start && e <= end) {
      done++;
      prompt += r.usage?.prompt_tokens ?? 0;
      if (!anySlo || meetsSlo(deriveRequest(r), slo, openLoop)) good++;
    }
  }
  const per = (x: number) => (w.windowS > 0 ? x / w.windowS : 0);
  return {
    output_tok_s: per(tokens),
    total_tok_s: per(tokens + prompt),
    req_s: per(done),
    goodput_req_s: per(good),
  };
}

/**
 * Completions per second from their times (ms, sorted): the least-squares slope of the count over
 * time. A server whose slots were filled at once finishes in batches; counting from the first
 * completion to the last, (n - 1) / span, counts the first batch's other members as done inside
 * the span, so 16 slots over 8 batches read 7 % fast; the slope of a staircase is its step height
 * over its step width whatever its phase. Null when the completions share one instant.
 */
export function paceRps(doneAtMs: readonly number[]): number | null {
  const n = doneAtMs.length;
  const meanT = doneAtMs.reduce((a, b) => a + b, 0) / n;
  const meanI = (n - 1) / 2;
  let sty = 0;
  let stt = 0;
  for (let i = 0; i < n; i++) {
    const dt = doneAtMs[i]! - meanT;
    sty += dt * (i - meanI);
    stt += dt * dt;
  }
  return stt > 0 ? (1000 * sty) / stt : null;
}
