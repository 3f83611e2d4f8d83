/**
 * A worker thread of `--workers N` (built to dist/shard-thread.js): its own client and
 * connections, its own event loop and self-check. Every timestamp is put on the run's one clock:
 * the main thread sends the run's origin on the machine's monotonic clock, and this thread, whose
 * `performance.now()` starts elsewhere, converts it to its own scale. The start time stays an epoch
 * time: runners on other machines share only that.
 */
import { performance } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";
import type { LevelResult, RequestRecord } from "../../schema/v1.ts";
import { monotonicOriginMs } from "../client/clock.ts";
import { warmUpClientPath } from "../client/jit-warmup.ts";
import { type ClientOptions, StreamClient } from "../client/stream-client.ts";
import type { ResolvedTarget } from "../server/target.ts";
import type { LevelRun } from "./loops.ts";
import { SelfCheck, sendQueueOf } from "./self-check.ts";
import { runShare, runShareWarmup, type ShareJob } from "./shard-run.ts";

export interface ShardWorkerData extends ClientOptions {
  target: ResolvedTarget;
  /** The run's origin on the machine's monotonic clock, ms (see client/clock.ts). */
  originMonotonicMs: number;
}

export type ToWorker =
  | { op: "warmup"; job: ShareJob }
  | { op: "run"; startEpochMs: number }
  | { op: "stop" }
  | { op: "close" };

export type FromWorker =
  | { op: "warmed"; records: RequestRecord[] }
  | { op: "progress"; done: number }
  | { op: "done"; run: LevelRun; check: LevelResult["client"] }
  | { op: "closed" }
  | { op: "failed"; message: string };

const port = parentPort!;
const data = workerData as ShardWorkerData;
const { originMonotonicMs, ...options } = data;
const client = new StreamClient({ ...options, originMs: originMonotonicMs - monotonicOriginMs() });
let job: ShareJob | null = null;
const stopping = new AbortController();
const post = (m: FromWorker) => port.postMessage(m);

port.on("message", (m: ToWorker) => {
  void (async () => {
    try {
      if (m.op === "warmup") {
        if (job === null) await warmUpClientPath(client.cfg);
        job = m.job;
        post({ op: "warmed", records: await runShareWarmup(client, job) });
      } else if (m.op === "run") {
        if (job === null) throw new Error("run before warmup");
        const check = new SelfCheck(true);
        let done = 0;
        const ticker = setInterval(() => post({ op: "progress", done }), 500);
        check.start();
        const run = await runShare(client, job, {
          startAtAbsMs: m.startEpochMs - performance.timeOrigin,
          stop: stopping.signal,
          onRecord: () => {
            done++;
          },
        });
        clearInterval(ticker);
        post({ op: "done", run, check: check.stop(sendQueueOf(run.records), run.records) });
      } else if (m.op === "stop") {
        stopping.abort();
        await client.destroy().catch(() => {});
      } else if (m.op === "close") {
        if (!stopping.signal.aborted) await client.close().catch(() => {}); // a stopped client was destroyed already
        post({ op: "closed" });
        port.close();
      }
    } catch (err) {
      post({ op: "failed", message: (err as Error).stack ?? String(err) });
    }
  })();
});
