// Scaling the load out over worker threads (#15), in the case users have: every stream chunk is
// its own socket read (the mock in its own process writes one token per stream every 10 ms, so
// at 100 tok/s per stream no two chunks of a stream share a read). Per streams x workers:
//   - client CPU per chunk (the whole bench process: every thread; the mock is another process),
//   - delivery lag: client receive time minus the mock's own send time (x-tokenbench-server-ts),
//   - TTFT error: client TTFT minus the mock's (first token sent - request arrived),
//   - the self-check: does its bound cover the lag, and which thread warned.
//   npx tsx bench/shards.ts [--quick] [--streams 16,256] [--workers 1,2,auto]
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { autoWorkers } from "../src/core/load/load-generator.ts";
import { preflight } from "../src/core/server/preflight.ts";
import { makeTarget } from "../src/core/server/target.ts";
import { defaultSweepConfig } from "../src/core/sweep/config.ts";
import { runSweep } from "../src/core/sweep/sweep.ts";
import { f, pct, spawnMock } from "./lib.ts";

const quick = process.argv.includes("--quick");
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? null : process.argv[i + 1]!;
};
const streamsList = (arg("--streams") ?? (quick ? "16,256" : "16,256,1000")).split(",").map(Number);
const auto = autoWorkers(true);
const workersList = [
  ...new Set((arg("--workers") ?? "1,2,auto").split(",").map((w) => (w === "auto" ? auto : Number(w)))),
];
const results: Record<string, unknown> = { cores: availableParallelism(), auto_workers: auto };

async function run(streams: number, workers: number) {
  const mock = await spawnMock([
    "--ttft-ms",
    "20",
    "--itl-ms",
    "10",
    "--capacity",
    "100000",
    "--prefix-cache-tokens",
    "0",
  ]);
  const target = makeTarget({
    baseUrl: mock.url,
    api: "chat",
    model: "mock-model",
    apiKey: null,
    headers: { "x-tokenbench-server-ts": "1" },
  });
  const config = defaultSweepConfig({
    levels: [streams],
    requests_per_level: streams,
    max_tokens: quick ? 100 : 300,
    warmup_requests: Math.min(streams, 32),
    ignore_eos: true,
    metrics_interval_ms: null,
    timeout_s: 300,
  });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const pre = await preflight(target, null, {
    readyTimeoutS: 10,
    serverLimits: {},
    calibrate: false,
    onNotice: () => {},
  });
  const doc = await runSweep({
    pre,
    config,
    out: null,
    records: "inline",
    resume: false,
    load: { workers, shard: null, startAtEpochMs: null, levelSlotMs: 0 },
  });
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await mock.stop();
  const recs = (doc.requests ?? []).filter((r) => !r.warmup && r.error === null);
  const all = doc.requests ?? [];
  // CPU while the level ran (the process: main thread and workers), per chunk of the level.
  const chunks = all.filter((r) => !r.warmup).reduce((a, r) => a + r.event_count, 0);
  const lag: number[] = [];
  const ttftErr: number[] = [];
  for (const r of recs) {
    const s = r.server_event_times_ms ?? [];
    for (let i = 0; i < s.length; i++) lag.push(r.event_times_ms[i]! - s[i]!);
    if (s.length > 0 && r.server_arrival_ms !== undefined && r.first_token_ms !== null)
      ttftErr.push(r.first_token_ms - r.send_ms - (s[0]! - r.server_arrival_ms));
  }
  const level = doc.levels[0]!;
  const levelCpuUs = (level.client.cpu_user_s + level.client.cpu_system_s) * 1e6;
  const usPerChunk = levelCpuUs / chunks;
  const bound = level.client.lateness_bound_ms ?? null;
  const lagP99 = pct(lag, 0.99);
  const warned = level.client.bottleneck_warning !== null;
  const covered = !warned || (bound !== null && bound >= lagP99);
  const threads = (level.client.shards ?? []).map((s) => `${s.thread} busy ${f(s.busy_pct, 0)}%`).join(", ");
  console.log(
    `${String(streams).padStart(5)} streams x ${workers} worker(s): ${recs.length}/${level.requests} ok, ${chunks} chunks in ${f(wallS, 1)} s; ` +
      `CPU ${f(usPerChunk, 1)} us/chunk (level: ${f(level.client.cpu_pct_of_one_core, 0)}% of a core; whole run incl. setup ${f((100 * (cpu.user + cpu.system)) / 1e6 / wallS, 0)}%); ` +
      `lag p50 ${f(pct(lag, 0.5), 2)} p99 ${f(lagP99, 2)} ms; TTFT error p50 ${f(pct(ttftErr, 0.5), 2)} p99 ${f(pct(ttftErr, 0.99), 2)} ms; ` +
      `self-check ${warned ? `warns, bound ${f(bound ?? Number.NaN, 1)} ms${covered ? "" : " (does NOT cover the lag)"}` : "quiet"}` +
      (threads ? ` [${threads}]` : ""),
  );
  results[`c${streams}_w${workers}`] = {
    us_per_chunk: usPerChunk,
    lag_p50_ms: pct(lag, 0.5),
    lag_p99_ms: lagP99,
    ttft_error_p50_ms: pct(ttftErr, 0.5),
    ttft_error_p99_ms: pct(ttftErr, 0.99),
    warned,
    bound_covers_lag: covered,
  };
}

for (const s of streamsList) for (const w of workersList) await run(s, w);
console.log(JSON.stringify({ bench: "shards", ...results }));
