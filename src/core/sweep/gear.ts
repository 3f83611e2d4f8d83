/**
 * What a sweep opens once and closes once, in one place: the client per server (the head's, and
 * with `--ab` the base's) with its JIT warm-up, the worker pool, the /metrics sampler per server,
 * GPU telemetry (its idle window before any load), the environment and the server's limits.
 * Stopping (SIGINT/SIGTERM) ends the requests in flight at once.
 */
import type { ResultDocument, SweepConfig } from "../../schema/v1.ts";
import { monotonicOriginMs } from "../client/clock.ts";
import { warmUpClientPath } from "../client/jit-warmup.ts";
import { clientOptionsOf, StreamClient } from "../client/stream-client.ts";
import type { LevelRunContext, Progress } from "../load/level-run.ts";
import type { LoadGenerator } from "../load/load-generator.ts";
import { ThreadPool } from "../load/thread-pool.ts";
import { captureEnvironment } from "../results/environment.ts";
import { MetricsSampler } from "../server/metrics-sampler.ts";
import type { Preflight } from "../server/preflight.ts";
import { limitNumber } from "../server/snapshot.ts";
import { type GpuRun, openGpu } from "./gpu.ts";

/** One server a sweep measures: its preflight, its client and its sampler. */
export interface Arm {
  pre: Preflight;
  ctx: LevelRunContext;
  limits: { maxRunningRequests: number | null; cudaGraphMaxBs: number | null };
}

export interface Gear {
  head: Arm;
  /** `--ab`: the base's server. */
  base: Arm | null;
  gpu: GpuRun | null;
  environment: ResultDocument["environment"];
  close(): Promise<void>;
}

export async function openGear(o: {
  cfg: SweepConfig;
  head: Preflight;
  base: Preflight | null;
  load: LoadGenerator;
  origin: { originMs: number; originWallMs: number };
  notice: (m: string) => void;
  onProgress?: ((p: Progress) => void) | undefined;
  stop?: AbortSignal | undefined;
  offsetsMs: readonly number[] | null;
  /** `--gpu-metrics-url` as given (the configuration holds its public form). */
  gpuMetricsUrl?: string | null;
}): Promise<Gear> {
  const { cfg, load } = o;
  const environment = await captureEnvironment();
  // GPU telemetry first: its idle window comes before any load (a notice and nothing else without a GPU tool).
  const gpu = await openGpu(cfg, o.origin, o.notice, o.gpuMetricsUrl ?? null);
  // A pool's threads are bound to one server: with --ab each server has its own, of the same size.
  const poolFor = (pre: Preflight) =>
    load.workers > 1
      ? new ThreadPool(load.workers, {
          target: pre.target,
          ...clientOptionsOf(cfg),
          originMonotonicMs: monotonicOriginMs() + o.origin.originMs,
        })
      : null;
  const pools: ThreadPool[] = [];
  const arm = (pre: Preflight): Arm => {
    const pool = poolFor(pre);
    if (pool) pools.push(pool);
    return armOf(pre, pool);
  };
  const armOf = (pre: Preflight, pool: ThreadPool | null): Arm => ({
    pre,
    ctx: {
      cfg,
      client: new StreamClient({ target: pre.target, ...clientOptionsOf(cfg), originMs: o.origin.originMs }),
      sampler:
        cfg.metrics_interval_ms !== null
          ? new MetricsSampler(pre.target, cfg.metrics_interval_ms, o.origin.originMs)
          : null,
      onProgress: o.onProgress,
      stop: o.stop,
      pool,
      offsetsMs: o.offsetsMs,
    },
    limits: {
      maxRunningRequests: limitNumber(pre.server.limits, "max_running_requests"),
      cudaGraphMaxBs: limitNumber(pre.server.limits, "cuda_graph_max_bs"),
    },
  });
  const head = arm(o.head);
  const base = o.base ? arm(o.base) : null;
  // Compile the client's hot path first (jit-warmup.ts): the threads of a pool do their own.
  if (pools.length === 0) await warmUpClientPath(head.ctx.client.cfg);
  const arms = [head, ...(base ? [base] : [])];
  const onStop = () => {
    for (const a of arms) a.ctx.client.destroy().catch(() => {});
    for (const p of pools) p.stop();
  };
  o.stop?.addEventListener("abort", onStop, { once: true });
  return {
    head,
    base,
    gpu,
    environment,
    async close() {
      o.stop?.removeEventListener("abort", onStop);
      for (const a of arms) await a.ctx.client.close().catch(() => {});
      await gpu?.stop();
      for (const p of pools) await p.close();
    },
  };
}
