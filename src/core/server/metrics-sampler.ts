/**
 * Server `/metrics` during a level: a sampler that scrapes every `--metrics-interval-ms`, the
 * mapping of each engine's metric names onto running / waiting / KV usage, and the per-level
 * admission summary (admitted vs queued, Little's law, why the curve bent).
 */

import type { MetricsSample } from "../../schema/v1.ts";
import { httpCall } from "./http.ts";
import { type PromSample, parsePrometheus } from "./prometheus.ts";
import { combineSnapshots, type HistogramSnapshot, histogramSnapshot } from "./server-histograms.ts";
import { endpointTargets, rootUrl, type Target, url } from "./target.ts";

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

/**
 * Several servers' samples at one instant as one: requests running and waiting summed (the
 * system's), KV usage their mean (each server's own fraction), the raw gauges the first's.
 */
export function combineSamples(tMs: number, each: readonly MetricsSample[]): MetricsSample {
  const sum = (f: (s: MetricsSample) => number | null) => {
    const vs = each.map(f).filter((v): v is number => v !== null);
    return vs.length === 0 ? null : vs.reduce((a, b) => a + b, 0);
  };
  const kvs = each.map((s) => s.kv_cache_usage_pct).filter((v): v is number => v !== null);
  return {
    t_ms: tMs,
    running: sum((s) => s.running),
    waiting: sum((s) => s.waiting),
    kv_cache_usage_pct: kvs.length === 0 ? null : kvs.reduce((a, b) => a + b, 0) / kvs.length,
    raw: each[0]?.raw ?? {},
  };
}

/** Samples `/metrics` at a fixed interval while a level runs (every server of the target, at once). */
export class MetricsSampler {
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> | null = null;
  private readonly targets: Target[];
  samples: MetricsSample[] = [];
  /** `--base-url A,B`: each server's own samples (empty with one server). */
  perEndpoint: MetricsSample[][] = [];
  /** Each scrape's per-request histograms and cache counters (server-histograms.ts). */
  snapshots: HistogramSnapshot[] = [];
  available = false;
  /** Scrapes this level, and how many got no answer (unreachable, or an HTTP error). */
  scrapes = 0;
  failures = 0;
  lastError: string | null = null;

  constructor(
    target: Target,
    private readonly intervalMs: number,
    private readonly originMs: number,
  ) {
    this.targets = endpointTargets(target);
  }

  private async once(): Promise<void> {
    const t = performance.now() - this.originMs;
    const several = this.targets.length > 1;
    const results = await Promise.all(this.targets.map((target) => scrapeMetrics(target)));
    const each: MetricsSample[] = [];
    const histograms: HistogramSnapshot[] = [];
    for (const [i, r] of results.entries()) {
      this.scrapes++;
      if (r.error !== null) {
        this.failures++;
        this.lastError = several ? `${rootUrl(this.targets[i]!)}: ${r.error}` : r.error;
      }
      if (!r.ok) continue;
      const s = toSample(t, r.samples);
      each.push(s);
      if (several) this.perEndpoint[i]!.push(s);
      histograms.push(histogramSnapshot(t, r.samples));
    }
    if (each.length === 0) return;
    this.available = true;
    this.samples.push(several ? combineSamples(t, each) : each[0]!);
    // a phase summed over the servers only when every one of them answered and has it
    if (histograms.length === this.targets.length)
      this.snapshots.push(several ? combineSnapshots(t, histograms) : histograms[0]!);
  }

  start(): void {
    this.samples = [];
    this.perEndpoint = this.targets.length > 1 ? this.targets.map(() => []) : [];
    this.snapshots = [];
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
