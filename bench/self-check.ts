// The client's self-check against the truth: at 1 to 1,000 streams x 100 tok/s (the mock in its
// own process, sending its own send timestamps), does the self-check warn exactly when the client
// delivers late, and does the lateness it states cover the delivery lag really measured?
// Also the idle cost: client CPU per chunk at 1 stream x 100 tok/s.
//   npx tsx bench/self-check.ts [--quick]
import { performance } from "node:perf_hooks";
import { StreamClient } from "../src/core/client.ts";
import { runClosedLoop } from "../src/core/load.ts";
import { SelfCheck } from "../src/core/self-check.ts";
import { makeTarget } from "../src/core/target.ts";
import { f, pct, spawnMock } from "./lib.ts";

const quick = process.argv.includes("--quick");
const results: Record<string, unknown> = {};

function client(url: string) {
  return new StreamClient({
    target: makeTarget({
      baseUrl: url,
      api: "chat",
      model: "mock-model",
      apiKey: null,
      headers: { "x-tokenbench-server-ts": "1" },
    }),
    timeoutS: 300,
    ignoreEos: true,
    extraBody: {},
    originMs: performance.now(),
  });
}
let id = 0;
const spec = (maxTokens: number) => ({
  id: id++,
  level: 1,
  warmup: false,
  prompt: "bench prompt with a few words",
  maxTokens,
  promptTokensRequested: 5,
  intendedSendAbsMs: null,
});

async function level(streams: number, tokens: number) {
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
  const c = client(mock.url);
  await runClosedLoop(c, () => spec(2), { concurrency: streams, requests: streams, durationS: null });
  const check = new SelfCheck();
  check.start();
  const elu0 = performance.eventLoopUtilization();
  const run = await runClosedLoop(c, () => spec(tokens), {
    concurrency: streams,
    requests: 2 * streams,
    durationS: null,
  });
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const sendQueue = run.records.map((r) => r.send_ms - Math.max(r.dispatch_ms!, r.connected_ms ?? 0));
  const verdict = check.stop(sendQueue, run.records);
  const lag: number[] = [];
  for (const r of run.records) {
    const s = r.server_event_times_ms ?? [];
    for (let i = 0; i < s.length; i++) lag.push(r.event_times_ms[i]! - s[i]!);
  }
  await c.close();
  await mock.stop();
  const lagP99 = pct(lag, 0.99);
  const bound = verdict.lateness_bound_ms ?? null;
  const warned = verdict.bottleneck_warning !== null;
  // The targets: a warning wherever the lag p99 exceeds 2 ms, and a bound that covers it wherever
  // the self-check warns. A warning at a lower lag is shown, not counted as a miss.
  const ok = (lagP99 > 2 ? warned : true) && (!warned || (bound !== null && bound >= lagP99));
  const cautious = warned && lagP99 <= 2;
  console.log(
    (process.env.WHY && verdict.bottleneck_warning ? `${verdict.bottleneck_warning}\n` : "") +
      `${String(streams).padStart(5)} streams: delivery lag p50 ${f(pct(lag, 0.5), 2)} p99 ${f(lagP99, 2)} ms; ` +
      `self-check ${warned ? `WARNS${cautious ? " (cautious: lag within 2 ms)" : ""}, bound ${f(bound ?? Number.NaN, 1)} ms` : "quiet"} ` +
      `(loop delay p50 ${f(verdict.event_loop_delay_ms.p50 ?? Number.NaN, 1)} p99 ${f(verdict.event_loop_delay_ms.p99 ?? Number.NaN, 1)} max ${f(verdict.event_loop_delay_ms.max ?? Number.NaN, 1)} ms, ELU ${f(elu, 2)}, CPU ${f(verdict.cpu_pct_of_one_core, 0)}% of a core) [${ok ? "PASS" : "MISS"}]`,
  );
  results[`c${streams}`] = {
    lag_p50_ms: pct(lag, 0.5),
    lag_p99_ms: lagP99,
    warned,
    bound_ms: bound,
    pass: ok,
  };
}

async function idle(seconds: number) {
  const mock = await spawnMock(["--ttft-ms", "5", "--itl-ms", "10", "--prefix-cache-tokens", "0"]);
  const c = client(mock.url);
  // Warm-up (not measured): the first seconds of a process are JIT compilation on background
  // threads, which process.cpuUsage counts; a sweep runs for minutes, so steady state is the case,
  // measured over 20 s (10 s moved by a third between runs on the reference machine).
  const w0 = performance.now();
  while (performance.now() - w0 < 5000) await c.stream(spec(100));
  const check = new SelfCheck();
  check.start();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let chunks = 0;
  while (performance.now() - t0 < seconds * 1000) chunks += (await c.stream(spec(100))).event_count;
  const cpu = process.cpuUsage(cpu0);
  check.stop([]);
  const msPerChunk = (cpu.user + cpu.system) / 1000 / chunks;
  const pctCore = (100 * (cpu.user + cpu.system)) / 1000 / (performance.now() - t0);
  console.log(
    `idle: 1 stream x 100 tok/s for ${seconds} s after 5 s of warm-up: ${chunks} chunks, client CPU ${f(msPerChunk, 3)} ms per chunk (${f(pctCore, 1)}% of a core, self-check on) [target <= 0.45 ms, a Python aiohttp client here: ${msPerChunk <= 0.45 ? "PASS" : "MISS"}]`,
  );
  results.idle_ms_per_chunk = msPerChunk;
  await c.close();
  await mock.stop();
}

await idle(quick ? 3 : 20);
for (const n of process.argv.includes("--only-1000") ? [1000] : quick ? [1, 16, 256] : [1, 16, 64, 256, 1000])
  await level(n, quick ? 50 : 100);
console.log(JSON.stringify({ bench: "self-check", ...results }));
