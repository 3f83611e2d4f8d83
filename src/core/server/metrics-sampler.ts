/**
 * Server `/metrics` during a level: a sampler that scrapes every `--metrics-interval-ms`, the
 * mapping of each engine's metric names onto running / waiting / KV usage, and the per-level
 * admission summary (admitted vs queued, Little's law, why the curve bent).
 */

import type { AdmissionSummary, LevelResult, MetricsSample, RequestRecord } from "../../schema/v1.ts";
import { httpCall } from "./http.ts";
import { type PromSample, parsePrometheus } from "./prometheus.ts";
import { type Target, url } from "./target.ts";

/** Known names per engine. KV usage gauges are fractions (0..1) in every engine listed here. */
export const METRIC_NAMES = {
  running: [
    "vllm:num_requests_running",
    "sglang:num_running_reqs",
    "freetoken:requests_running",
    "llamacpp:requests_processing",
    "tgi_batch_current_size",
  ],
  waiting: [
    "vllm:num_requests_waiting",
    "sglang:num_queue_reqs",
    "freetoken:requests_waiting",
    "llamacpp:requests_deferred",
    "tgi_queue_size",
  ],
  kvFraction: [
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
    "freetoken:kv_cache_usage_ratio",
    "llamacpp:kv_cache_usage_ratio",
  ],
  queueTimeSeconds: [
    "vllm:request_queue_time_seconds",
    "sglang:queue_time_seconds",
    "freetoken:request_queue_time_seconds",
    "tgi_request_queue_duration",
  ],
} as const;

const KNOWN = new Set<string>([...METRIC_NAMES.running, ...METRIC_NAMES.waiting, ...METRIC_NAMES.kvFraction]);

function pick(samples: PromSample[], names: readonly string[]): number | null {
  for (const n of names) {
    let found = false;
    let sum = 0;
    for (const s of samples) {
      if (s.name === n) {
        found = true;
        sum += s.value;
      }
    }
    if (found) return sum;
  }
  return null;
}

export function queueHistogram(samples: PromSample[]): { sum: number; count: number } | null {
  for (const n of METRIC_NAMES.queueTimeSeconds) {
    const sum = pick(samples, [`${n}_sum`]);
    const count = pick(samples, [`${n}_count`]);
    if (sum !== null && count !== null) return { sum, count };
  }
  return null;
}

export function toSample(tMs: number, samples: PromSample[]): MetricsSample {
  const kv = pick(samples, METRIC_NAMES.kvFraction);
  const raw: Record<string, number> = {};
  let n = 0;
  for (const s of samples) {
    if (KNOWN.has(s.name) || /_(bucket|sum|count|created)$/.test(s.name) || !Number.isFinite(s.value))
      continue;
    const key = Object.keys(s.labels).length
      ? `${s.name}{${Object.entries(s.labels)
          .map(([k, v]) => `${k}="${v}"`)
          .join(",")}}`
      : s.name;
    raw[key] = s.value;
    if (++n >= 200) break;
  }
  return {
    t_ms: tMs,
    running: pick(samples, METRIC_NAMES.running),
    waiting: pick(samples, METRIC_NAMES.waiting),
    kv_cache_usage_pct: kv === null ? null : kv * 100,
    raw,
  };
}

export interface ScrapeResult {
  ok: boolean;
  samples: PromSample[];
  status: number | null;
  /** Why the scrape failed (connection error or HTTP status), null when it answered 200. */
  error: string | null;
}

export async function scrapeMetrics(target: Target): Promise<ScrapeResult> {
  const r = await httpCall(url(target, "/metrics"), { headers: { ...target.headers }, timeoutMs: 5_000 });
  if (r.status !== 200 || r.text === null)
    return { ok: false, samples: [], status: r.status, error: r.error ?? `HTTP ${r.status}` };
  const samples = parsePrometheus(r.text);
  return { ok: samples.length > 0, samples, status: r.status, error: null };
}

/** Samples `/metrics` at a fixed interval while a level runs. */
export class MetricsSampler {
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> | null = null;
  samples: MetricsSample[] = [];
  queueStart: { sum: number; count: number } | null = null;
  queueEnd: { sum: number; count: number } | null = null;
  available = false;
  /** Scrapes this level, and how many got no answer (unreachable, or an HTTP error). */
  scrapes = 0;
  failures = 0;
  lastError: string | null = null;

  constructor(
    private readonly target: Target,
    private readonly intervalMs: number,
    private readonly originMs: number,
  ) {}

  private async once(): Promise<void> {
    const t = performance.now() - this.originMs;
    const r = await scrapeMetrics(this.target);
    this.scrapes++;
    if (r.error !== null) {
      this.failures++;
      this.lastError = r.error;
    }
    if (!r.ok) return;
    this.available = true;
    const s = toSample(t, r.samples);
    this.samples.push(s);
    const q = queueHistogram(r.samples);
    if (q !== null) {
      if (this.queueStart === null) this.queueStart = q;
      this.queueEnd = q;
    }
  }

  start(): void {
    this.samples = [];
    this.queueStart = null;
    this.queueEnd = null;
    this.available = false;
    this.scrapes = 0;
    this.failures = 0;
    this.lastError = null;
    const tick = () => {
      if (this.inflight === null) {
        this.inflight = this.once().finally(() => {
          this.inflight = null;
        });
      }
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.inflight) await this.inflight;
    await this.once(); // a final sample after the level: counters settle
  }
}

/** Time-weighted mean number of client requests in flight between first send and last end. */
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

const maxOf = (xs: (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? Math.max(...v) : null;
};
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
        reasons.push("client_queueing");
        notes.push(
          `client-side queueing: ${observed.toFixed(1)} requests in flight on the client on average, but the server reported only ${serverHeld.toFixed(1)} running + waiting and nobody waiting; requests were held before the server's scheduler (client, connection, or server front end)`,
        );
      }
    }
  }
  if (kvMax !== null && kvMax >= 95) {
    reasons.push("kv_full");
    notes.push(`KV cache full: peak usage ${kvMax.toFixed(1)} %`);
  }
  if (level.client.bottleneck_warning && !reasons.includes("client_queueing")) {
    reasons.push("client_queueing");
    notes.push(level.client.bottleneck_warning);
  }
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
