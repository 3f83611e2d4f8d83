/**
 * A level's admission, from the server's /metrics timeline (sampled by server/metrics-sampler.ts)
 * and the client's records: how many requests the server ran and queued against how many the
 * client offered, Little's law as a cross-check, and why the curve bent, as far as the evidence
 * says. Pure.
 */
import type { AdmissionSummary, LevelResult, MetricsSample, RequestRecord } from "../../schema/v1.ts";
import { maxOrNull as maxOf } from "../../shared/extremes.ts";

/** Time-weighted mean number of client requests in flight between first send and last end. */
/** A client send queue (p99) under this held nothing worth naming: the wait was the server's. */
const CLIENT_QUEUE_MS = 1;

export function meanInFlight(records: readonly RequestRecord[]): number | null {
  if (records.length === 0) return null;
  const ev: { t: number; d: number }[] = [];
  for (const r of records) {
    ev.push({ t: r.send_ms, d: 1 }, { t: r.end_ms ?? r.send_ms, d: -1 });
  }
  ev.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let area = 0;
  let last = ev[0]!.t;
  for (const e of ev) {
    area += cur * (e.t - last);
    last = e.t;
    cur += e.d;
  }
  const span = ev[ev.length - 1]!.t - ev[0]!.t;
  return span > 0 ? area / span : null;
}

const meanOf = (xs: (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};

export interface AdmissionInput {
  level: LevelResult;
  records: readonly RequestRecord[];
  samples: MetricsSample[];
  metricsAvailable: boolean;
  /** Scrapes that got no answer this level, of how many, and the last error. */
  scrapeFailures?: { failures: number; scrapes: number; lastError: string | null };
  queueDelta: { sum: number; count: number } | null;
  limits: { maxRunningRequests: number | null; cudaGraphMaxBs: number | null };
  /**
   * The level's steady-state window, or null: the in-flight comparison behind "client-side
   * queueing" is made inside it only (a level's idle start and end would pull the server's
   * running count down, and a level without one is not compared at all).
   */
  window?: { startMs: number; endMs: number } | null;
}

/** Mean requests in flight over [start, end] (the time-weighted count). */
function meanInFlightWithin(records: readonly RequestRecord[], start: number, end: number): number | null {
  if (!(end > start)) return null;
  let area = 0;
  for (const r of records) {
    const a = Math.max(start, r.send_ms);
    const b = Math.min(end, r.end_ms ?? r.send_ms);
    if (b > a) area += b - a;
  }
  return area / (end - start);
}

export function admissionSummary(input: AdmissionInput): AdmissionSummary {
  const { level, samples } = input;
  const recs = input.records.filter((r) => !r.warmup);
  const offered = level.mode === "closed" ? level.level : level.peak_in_flight;
  const running = samples.map((s) => s.running);
  const waiting = samples.map((s) => s.waiting);
  const hasGauges = running.some((x) => x !== null);
  const admittedMax = maxOf(running);
  const queuedMax = maxOf(waiting);
  const kvMax = maxOf(samples.map((s) => s.kv_cache_usage_pct));
  const queueMeanMs =
    input.queueDelta !== null && input.queueDelta.count > 0
      ? (1000 * input.queueDelta.sum) / input.queueDelta.count
      : null;
  const e2eSum = recs.reduce((a, r) => a + ((r.end_ms ?? r.send_ms) - r.send_ms), 0);
  const implied = level.wall_time_s > 0 ? e2eSum / 1000 / level.wall_time_s : null;
  const observed = meanInFlight(recs);
  const runMean = meanOf(running);
  const waitMean = meanOf(waiting);
  const notes: string[] = [];
  const reasons: AdmissionSummary["bend_reasons"] = [];
  const source: AdmissionSummary["source"] = hasGauges
    ? "metrics"
    : queueMeanMs !== null
      ? "server_queue_time"
      : "none";
  const sf = input.scrapeFailures;
  if (!input.metricsAvailable && sf !== undefined && sf.failures > 0 && sf.failures === sf.scrapes) {
    const http = sf.lastError !== null && /^HTTP \d+/.test(sf.lastError);
    notes.push(
      http
        ? `server /metrics not observable (${sf.lastError}): admitted and queued requests are unknown (not zero)`
        : `server /metrics unreachable, not observable (${sf.failures} of ${sf.scrapes} scrapes failed: ${sf.lastError}): admitted and queued requests are unknown (not zero)`,
    );
  } else if (!input.metricsAvailable) {
    notes.push("server /metrics not observable: admitted and queued requests are unknown (not zero)");
  } else if (!hasGauges) {
    notes.push("server /metrics has no known running/waiting gauges: admission not observable");
  }
  const cap = input.limits.maxRunningRequests;
  if (hasGauges) {
    if ((queuedMax ?? 0) > 0) {
      reasons.push("server_queue");
      notes.push(`server queue: up to ${queuedMax} requests waiting while at most ${admittedMax} ran`);
    }
    // The cap is a reason for the bend only where the level was steady, on the window's samples
    // (a level with no window is not diagnosed: its samples are mostly filling and draining).
    const win = input.window ?? null;
    const capSamples = win ? samples.filter((x) => x.t_ms >= win.startMs && x.t_ms <= win.endMs) : [];
    const admittedInWindow = maxOf(capSamples.map((x) => x.running));
    if (cap !== null && admittedInWindow !== null && admittedInWindow >= cap && offered > cap) {
      reasons.push("scheduler_cap");
      notes.push(`scheduler cap: ${offered} offered, at most ${cap} admitted (max running requests)`);
    }
    // Client holds more requests in flight than the server reports running + waiting: compared
    // inside the steady window only, on the samples taken in it.
    const w = input.window ?? null;
    const inWindow = w ? samples.filter((s) => s.t_ms >= w.startMs && s.t_ms <= w.endMs) : [];
    const clientHeld = w ? meanInFlightWithin(recs, w.startMs, w.endMs) : null;
    const runW = meanOf(inWindow.map((s) => s.running));
    const waitW = meanOf(inWindow.map((s) => s.waiting));
    if (clientHeld !== null && runW !== null) {
      const serverHeld = runW + (waitW ?? 0);
      const observed = clientHeld;
      if (observed > serverHeld * 1.25 + 1 && (queuedMax ?? 0) === 0) {
        // Whose queue: the client's only when its own send queue held requests (1 ms at p99);
        // otherwise they waited in front of the server's scheduler, where its gauges do not look.
        const clientQueueMs = level.client.send_queue_ms?.p99 ?? 0;
        const client = clientQueueMs >= CLIENT_QUEUE_MS;
        if (!reasons.includes(client ? "client_queueing" : "server_queue"))
          reasons.push(client ? "client_queueing" : "server_queue");
        notes.push(
          client
            ? `client-side queueing: ${observed.toFixed(1)} requests in flight on the client on average, but the server reported only ${serverHeld.toFixed(1)} running + waiting; the client's own queue held requests up to ${clientQueueMs.toFixed(1)} ms (p99) before their socket write`
            : `queued in front of the server's scheduler: ${observed.toFixed(1)} requests in flight on the client on average, the server's gauges only ${serverHeld.toFixed(1)} running + waiting, and the client sent each within ${CLIENT_QUEUE_MS} ms; they waited in the server's front end or its connections`,
        );
      }
    }
  }
  if (kvMax !== null && kvMax >= 95) {
    reasons.push("kv_full");
    notes.push(`KV cache full: peak usage ${kvMax.toFixed(1)} %`);
  }
  // The client's own lateness is no reason for the server's bend: it is the level's validity
  // (results/validity.ts, client_bound), and the self-check says it once in its own notice.
  if (cap !== null && offered > cap && !hasGauges) {
    notes.push(
      `offered concurrency ${offered} exceeds the server's max running requests ${cap}: this is not a true c${offered} run`,
    );
  }
  return {
    observable: hasGauges,
    source,
    offered_concurrency: offered,
    max_running_requests: cap,
    cuda_graph_max_bs: input.limits.cudaGraphMaxBs,
    admitted_concurrency_max: admittedMax,
    queued_requests_max: queuedMax,
    kv_cache_usage_pct_max: kvMax,
    server_queue_time_mean_ms: queueMeanMs,
    metrics_samples: samples.length,
    littles_law: {
      implied_in_flight: implied,
      observed_in_flight_mean: observed,
      server_running_mean: runMean,
      server_waiting_mean: waitMean,
    },
    bend_reasons: reasons,
    notes,
  };
}
