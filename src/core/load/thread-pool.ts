/**
 * `--workers N`: N worker threads, each with its own client, connections and event loop, running
 * its share of every level (shard.ts). Started once per sweep; per level: all threads warm up,
 * then all start their share at one epoch time; the main thread merges what they measured.
 */
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { TokenbenchError } from "../../schema/errors.ts";
import type { LevelResult, RequestRecord } from "../../schema/v1.ts";
import { type LevelRun, sleepUntil, slotStart } from "./loops.ts";
import type { ShareJob } from "./shard-run.ts";
import type { FromWorker, ShardWorkerData, ToWorker } from "./shard-thread.ts";

/** dist/shard-thread.js beside the running bundle, or under dist/ when running from source. */
function workerFile(): string {
  for (const rel of ["./shard-thread.js", "../../../dist/shard-thread.js"]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new TokenbenchError(
    "workers_unavailable",
    "dist/shard-thread.js is missing: run `npm run build` (or use --workers 1)",
  );
}

class ThreadHandle {
  readonly worker: Worker;
  private waiting: {
    op: FromWorker["op"];
    resolve: (m: FromWorker) => void;
    reject: (e: Error) => void;
  } | null = null;
  done = 0;

  constructor(file: string, data: ShardWorkerData) {
    this.worker = new Worker(file, { workerData: data });
    this.worker.on("message", (m: FromWorker) => {
      if (m.op === "progress") {
        this.done = m.done;
        return;
      }
      const w = this.waiting;
      if (w === null) return;
      this.waiting = null;
      if (m.op === "failed") w.reject(new Error(`worker thread failed: ${m.message}`));
      else w.resolve(m);
    });
    this.worker.on("error", (err) => {
      const w = this.waiting;
      this.waiting = null;
      w?.reject(err);
    });
  }

  call<T extends FromWorker["op"]>(msg: ToWorker, reply: T): Promise<Extract<FromWorker, { op: T }>> {
    return new Promise((resolve, reject) => {
      this.waiting = { op: reply, resolve: resolve as (m: FromWorker) => void, reject };
      this.worker.postMessage(msg);
    });
  }

  send(msg: ToWorker): void {
    this.worker.postMessage(msg);
  }
}

export interface ThreadResult {
  warmup: RequestRecord[];
  run: LevelRun;
  check: LevelResult["client"];
}

export class ThreadPool {
  private readonly threads: ThreadHandle[];

  constructor(
    readonly size: number,
    data: ShardWorkerData,
  ) {
    const file = workerFile();
    this.threads = Array.from({ length: size }, () => new ThreadHandle(file, data));
  }

  /** Requests finished so far in the level in progress, over all threads. */
  get done(): number {
    return this.threads.reduce((a, t) => a + t.done, 0);
  }

  /**
   * One level on `jobs.length` threads: every thread's warmup, then every thread's share from
   * one start time a little after the last warmup ended.
   */
  async runLevel(
    jobs: ShareJob[],
    notBeforeEpochMs: number | null,
    onStart?: () => void,
    stop?: AbortSignal,
  ): Promise<{ results: ThreadResult[]; startLateMs: number | null }> {
    const used = this.threads.slice(0, jobs.length);
    for (const t of used) t.done = 0;
    const warm = await Promise.all(used.map((t, k) => t.call({ op: "warmup", job: jobs[k]! }, "warmed")));
    const { startEpochMs, lateMs } = slotStart(notBeforeEpochMs);
    const pending = Promise.all(used.map((t) => t.call({ op: "run", startEpochMs }, "done")));
    await sleepUntil(startEpochMs - performance.timeOrigin, stop);
    onStart?.();
    const runs = await pending;
    return {
      results: runs.map((r, k) => ({ warmup: warm[k]!.records, run: r.run, check: r.check })),
      startLateMs: lateMs,
    };
  }

  /** End the requests in flight at once (SIGINT/SIGTERM). */
  stop(): void {
    for (const t of this.threads) t.send({ op: "stop" });
  }

  async close(): Promise<void> {
    await Promise.all(
      this.threads.map(async (t) => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          t.call({ op: "close" }, "closed"),
          new Promise((r) => {
            timer = setTimeout(r, 2000);
          }),
        ]);
        clearTimeout(timer);
        await t.worker.terminate();
      }),
    );
  }
}
