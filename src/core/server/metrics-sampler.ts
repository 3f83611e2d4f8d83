/**
 * Server `/metrics` during a level: a sampler that scrapes every `--metrics-interval-ms`, the
 * mapping of each engine's metric names onto running / waiting / KV usage, and the per-level
 * admission summary (admitted vs queued, Little's law, why the curve bent).
 */

import type { MetricsSample } from "../../schema/v1.ts";
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
