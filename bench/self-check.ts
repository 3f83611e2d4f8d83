// The client's self-check against the truth: at 1 to 1,000 streams x 100 tok/s (the mock in its
// own process, sending its own send timestamps), does the self-check speak up wherever the client
// delivers late, blame the client only where its own work is the cause, and does the lateness it
// states cover the delivery lag really measured?
// Also the idle cost: client CPU per chunk at 1 stream x 100 tok/s, side by side with a Python
// aiohttp client reading the same mock the way vLLM's `bench serve` does (bench/reference-aiohttp.py;
// needs Debian's python3-aiohttp, else only the 0.45 ms figure of the issue is the reference).
// --only-idle: the 1-stream comparison alone.
//   npx tsx bench/self-check.ts [--quick]
import { spawn, spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { warmUpClientPath } from "../src/core/client/jit-warmup.ts";
import { StreamClient } from "../src/core/client/stream-client.ts";
import { runClosedLoop } from "../src/core/load/loops.ts";
import { SelfCheck } from "../src/core/load/self-check.ts";
import { makeTarget } from "../src/core/server/target.ts";
import { f, pct, ROOT, spawnMock } from "./lib.ts";

const quick = process.argv.includes("--quick");
/** --no-self-check: the idle windows without the self-check's sampler, to see what it costs. */
const withSelfCheck = !process.argv.includes("--no-self-check");
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
  // At 1 and 16 streams at least 1,000 chunks per level, so that a p99 is not one outlier.
  const perStream = streams <= 16 ? (quick ? 4 : 10) : 2;
  const run = await runClosedLoop(c, () => spec(tokens), {
    concurrency: streams,
    requests: perStream * streams,
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
  const blamed = verdict.bottleneck_warning !== null;
  const noted = (verdict.timing_note ?? null) !== null;
  const spoke = blamed || noted;
  // The targets: the self-check speaks up (a warning or a timing note) wherever the lag p99
  // exceeds 2 ms, states a bound that covers it wherever it speaks, and does not blame the client
  // at 1 or 16 streams. Speaking up at a lower lag is shown, not counted as a miss.
  const ok =
    (lagP99 > 2 ? spoke : true) &&
    (!spoke || (bound !== null && bound >= lagP99)) &&
    !(streams <= 16 && blamed);
  const cautious = spoke && lagP99 <= 2;
  const own = verdict.own_delay_ms?.p99 ?? Number.NaN;
  const said = blamed ? "BLAMES THE CLIENT" : noted ? "notes the machine's wake-ups" : "quiet";
  console.log(
    (process.env.WHY && spoke ? `${verdict.bottleneck_warning ?? verdict.timing_note}\n` : "") +
      `${String(streams).padStart(5)} streams: delivery lag p50 ${f(pct(lag, 0.5), 2)} p99 ${f(lagP99, 2)} ms; ` +
      `self-check ${said}${cautious ? " (cautious: lag within 2 ms)" : ""}${spoke ? `, bound ${f(bound ?? Number.NaN, 1)} ms` : ""} ` +
      `(loop delay p50 ${f(verdict.event_loop_delay_ms.p50 ?? Number.NaN, 1)} p99 ${f(verdict.event_loop_delay_ms.p99 ?? Number.NaN, 1)} max ${f(verdict.event_loop_delay_ms.max ?? Number.NaN, 1)} ms, busy part p99 ${f(own, 1)} ms, ELU ${f(elu, 2)}, CPU ${f(verdict.cpu_pct_of_one_core, 0)}% of a core) [${ok ? "PASS" : "MISS"}]`,
  );
  results[`c${streams}`] = {
    lag_p50_ms: pct(lag, 0.5),
    lag_p99_ms: lagP99,
    blamed,
    noted,
    bound_ms: bound,
    pass: ok,
  };
}

/** The reference client, if this machine has it: Debian's python3 with aiohttp. */
const PYTHON = "/usr/bin/python3";
const hasAiohttp = spawnSync(PYTHON, ["-c", "import aiohttp"], { stdio: "ignore" }).status === 0;

interface IdleFigure {
  msPerChunk: number;
  pctCore: number;
}

/**
 * Client CPU per chunk at 1 stream x 100 tok/s, in two windows: the first `coldS` seconds after
 * the client starts and runs the sweep's JIT warm-up (the first level of a sweep), and
 * `steadyS` seconds after `warmS` seconds of streaming (the steady state of a sweep that runs
 * minutes). The Python reference runs the same windows at the same time against the same mock,
 * so both see the same machine: a VM's cost per wake-up moves between runs more than the clients
 * differ.
 */
async function idle(coldS: number, warmS: number, steadyS: number) {
  const mock = await spawnMock(["--ttft-ms", "5", "--itl-ms", "10", "--prefix-cache-tokens", "0"]);
  let py: Promise<string> | null = null;
  if (hasAiohttp) {
    const child = spawn(
      PYTHON,
      [`${ROOT}/bench/reference-aiohttp.py`, mock.url, String(coldS), String(warmS), String(steadyS), "100"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    py = new Promise((res) => child.on("exit", () => res(out)));
  }
  const c = client(mock.url);
  // As a sweep does before its first level (src/core/client/jit-warmup.ts).
  const warm = await warmUpClientPath(c.cfg);
  const window = async (seconds: number): Promise<IdleFigure> => {
    const check = new SelfCheck();
    if (withSelfCheck) check.start();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let chunks = 0;
    while (performance.now() - t0 < seconds * 1000) chunks += (await c.stream(spec(100))).event_count;
    const cpu = process.cpuUsage(cpu0);
    if (withSelfCheck) check.stop([]);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return { msPerChunk: cpuMs / chunks, pctCore: (100 * cpuMs) / (performance.now() - t0) };
  };
  const cold = await window(coldS);
  const w0 = performance.now();
  while (performance.now() - w0 < (warmS - coldS) * 1000) await c.stream(spec(100));
  const steady = await window(steadyS);
  await c.close();
  let ref: { client: string; cold: IdleFigure; steady: IdleFigure } | null = null;
  if (py) {
    const j = JSON.parse((await py).trim().split("\n").pop()!) as {
      client: string;
      windows: { chunks: number; cpu_s: number; wall_s: number }[];
    };
    const fig = (w: { chunks: number; cpu_s: number; wall_s: number }) => ({
      msPerChunk: (w.cpu_s * 1000) / w.chunks,
      pctCore: (100 * w.cpu_s) / w.wall_s,
    });
    ref = { client: j.client, cold: fig(j.windows[0]!), steady: fig(j.windows[1]!) };
  }
  await mock.stop();
  // The target: no higher than the aiohttp client's, measured alongside; the issue measured that
  // client at about 0.45 ms per chunk on this machine, the figure used where Python is missing.
  const limit = ref?.steady.msPerChunk ?? 0.45;
  const pass = steady.msPerChunk <= limit;
  const line = (name: string, x: IdleFigure) =>
    `${name} ${f(x.msPerChunk, 3)} ms per chunk (${f(x.pctCore, 1)}% of a core)`;
  console.log(
    `idle, 1 stream x 100 tok/s, steady state (${steadyS} s after ${warmS} s of streaming): ${line("tokenbench", steady)} with its self-check ${withSelfCheck ? "on" : "off"}; ` +
      (ref
        ? `${line(ref.client, ref.steady)}, run alongside against the same mock`
        : "no Python aiohttp here (apt-get install python3-aiohttp to compare)") +
      ` [target: no higher than ${ref ? "the aiohttp client's" : "0.45 ms (the issue's aiohttp figure)"}: ${pass ? "PASS" : "MISS"}]`,
  );
  console.log(
    `idle, the first ${coldS} s of the process, after the sweep's JIT warm-up (${warm ? `${warm.chunks} chunks in ${f(warm.ms, 0)} ms` : "failed"}), as a sweep's first level: ${line("tokenbench", cold)}` +
      (ref ? `; ${line(ref.client, ref.cold)}` : ""),
  );
  results.idle_ms_per_chunk = steady.msPerChunk;
  results.idle_first_s_ms_per_chunk = cold.msPerChunk;
  if (ref) {
    results.idle_reference = ref.client;
    results.idle_reference_ms_per_chunk = ref.steady.msPerChunk;
  }
  results.idle_pass = pass;
}

await idle(quick ? 3 : 10, quick ? 6 : 30, quick ? 3 : 20);
if (!process.argv.includes("--only-idle"))
  for (const n of process.argv.includes("--only-1000")
    ? [1000]
    : quick
      ? [1, 16, 256]
      : [1, 16, 64, 256, 1000])
    await level(n, quick ? 50 : 100);
console.log(JSON.stringify({ bench: "self-check", ...results }));
