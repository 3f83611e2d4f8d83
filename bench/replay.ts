// Trace replay (#13): how closely the sender keeps a trace's times. A Mooncake-style trace of
// Poisson arrivals at 200 req/s (shared 512-token blocks, ~600-token prompts, 16 output tokens)
// is replayed by the real CLI (`node dist/cli.js sweep --trace`, as users run it) against the mock,
// each in its own process; replay lag = actual send (the socket write) minus the scheduled send.
// Target: p99 <= 2 ms at 200 req/s.
//
// Three placements, one after the other:
// - shared cores: the scheduler places every thread; the mock (nice 10) and the client's own V8
//   helper threads land on the core of the client's event loop and take it for milliseconds;
// - client core of its own: the client's event-loop thread pinned to CPU 0, the mock and the
//   client's other threads (V8's GC and compiler helpers, libuv's pool) to CPU 1, as when the
//   server runs on another machine and the client has a core. Needs Linux, 2 CPUs and taskset;
// - machine floor: the client and the mock on CPU 1, and on CPU 0 a busy loop that times how
//   often and how long the machine itself (kernel threads, the hypervisor) takes that CPU away;
//   the part of a sender's lateness no client can remove.
//   npx tsx bench/replay.ts [--quick] [--rate 200] [--seconds 10] [--output-tokens 16]
//     [--only shared_cores|own_core|machine_floor] [--client-node-flags "--single-threaded-gc"]
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import type { RequestRecord, ResultDocument } from "../src/schema/v1.ts";
import { rng } from "../src/shared/random.ts";
import { f, ROOT, spawnMock, verdict } from "./lib.ts";

const execFileP = promisify(execFile);
const quick = process.argv.includes("--quick");
const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? d : Number(process.argv[i + 1]);
};
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : null;
const rate = arg("--rate", 200);
const seconds = arg("--seconds", quick ? 4 : 10);
const outputTokens = arg("--output-tokens", 16);
const flagsAt = process.argv.indexOf("--client-node-flags");
/** Node/V8 flags for the client process only, e.g. --client-node-flags "--max-semi-space-size=2". */
const clientNodeFlags = flagsAt === -1 ? [] : process.argv[flagsAt + 1]!.split(" ").filter(Boolean);
const TARGET_P99_MS = 2;

/** A synthetic trace: Poisson arrivals, a third of requests sharing one of 8 system prompts. */
function syntheticTrace(n: number): string {
  const r = rng(20261130);
  let t = 0;
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    t += -Math.log(1 - r()) * (1000 / rate);
    const shared = r() < 0.33;
    lines.push(
      JSON.stringify({
        timestamp: Math.round(t * 1000) / 1000,
        input_length: 600,
        output_length: outputTokens,
        hash_ids: shared ? [Math.floor(r() * 8), 1000 + i] : [],
      }),
    );
  }
  return `${lines.join("\n")}\n`;
}

async function hasTaskset(): Promise<boolean> {
  if (process.platform !== "linux" || availableParallelism() < 2) return false;
  try {
    await execFileP("taskset", ["-p", String(process.pid)]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Pin a process's threads not pinned yet (`done`): its main thread (tid = pid) to one CPU, every
 * other thread to another.
 */
async function pinThreads(pid: number, mainCpu: number, otherCpu: number, done: Set<string>): Promise<void> {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return; // it has exited
  }
  for (const tid of tids) {
    if (done.has(tid)) continue;
    done.add(tid);
    const cpu = tid === String(pid) ? mainCpu : otherCpu;
    await execFileP("taskset", ["-p", "-c", String(cpu), tid]).catch(() => {});
  }
}

/** The CPU that everything not given a CPU of its own runs on in the pinned placements. */
const REST_CPU = 1;

/**
 * Where the client runs. null: the scheduler places every thread. Otherwise the client's main
 * (event-loop) thread goes to `clientMain`, and the bench, the mock and the client's other threads
 * to REST_CPU; `probe`: a busy loop on that CPU while the replay runs (the machine floor).
 */
interface Placement {
  key: "shared_cores" | "own_core" | "machine_floor";
  name: string;
  clientMain: number | null;
  probe: number | null;
}

const PLACEMENTS: Placement[] = [
  { key: "shared_cores", name: "shared cores", clientMain: null, probe: null },
  { key: "own_core", name: "client core of its own", clientMain: 0, probe: null },
  { key: "machine_floor", name: "machine floor", clientMain: REST_CPU, probe: 0 },
];

/**
 * The machine floor: a busy loop on a CPU nothing of ours runs on, timing every gap in its own
 * run. A gap is time the CPU was taken from it (kernel threads, the hypervisor). A send that falls
 * due at a random moment is late by more than 2 ms with probability sum(max(0, gap - 2)) / T.
 */
const PROBE = `
const { performance } = require("node:perf_hooks");
const T = Number(process.argv[1]) * 1000;
const t0 = performance.now(); let last = t0; const gaps = [];
for (;;) { const n = performance.now(); if (n - last > 0.2) gaps.push(n - last); last = n; if (n - t0 > T) break; }
console.log(JSON.stringify({ seconds: T / 1000, gaps }));`;

/** CPU time (ms) of the kernel threads that take a CPU for milliseconds here, by name. */
function kernelThreadsMs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      if (!/^(kdamond|rcu_|ksoftirqd|kcompactd|kswapd)/.test(comm)) continue;
      const ns = Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
      out.set(comm, (out.get(comm) ?? 0) + ns / 1e6);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function replay(p: Placement, traceFile: string, dir: string) {
  const pinned = p.clientMain !== null;
  // this process and what it starts (taskset, the mock, the client until pinned) on REST_CPU
  if (pinned) await execFileP("taskset", ["-a", "-p", "-c", String(REST_CPU), String(process.pid)]);
  const mock = await spawnMock(["--ttft-ms", "20", "--itl-ms", "5", "--capacity", "100000"], {
    nice: 10,
    ...(pinned ? { cpu: REST_CPU } : {}),
  });
  try {
    const out = join(dir, `${p.key}.json`);
    const t0 = performance.now();
    const client = spawn(
      process.execPath,
      [
        ...clientNodeFlags,
        resolve(ROOT, "bin/tokenbench.js"),
        "sweep",
        ...["--base-url", mock.url, "--model", "mock-model", "--api", "chat"],
        ...["--trace", traceFile, "--warmup", "100", "--metrics-interval-ms", "0"],
        ...["--records", "file", "--out", out],
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    client.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    // Threads a process starts later inherit its main thread's CPU, so new threads are looked for
    // every second; taskset runs from here, not in the client.
    let pinner: NodeJS.Timeout | null = null;
    if (pinned) {
      const done = new Set<string>();
      const pin = () => void pinThreads(client.pid!, p.clientMain!, REST_CPU, done);
      pin();
      pinner = setInterval(pin, 1000);
    }
    let probe: Promise<{ seconds: number; gaps: number[] }> | null = null;
    let kernelBefore: Map<string, number> | null = null;
    if (p.probe !== null) {
      // from the end of the client's JIT and request warm-up to the trace's end
      await new Promise((r) => setTimeout(r, 2500));
      kernelBefore = kernelThreadsMs();
      probe = execFileP("taskset", [
        "-c",
        String(p.probe),
        process.execPath,
        "-e",
        PROBE,
        String(seconds - 1),
      ]).then((r) => JSON.parse(r.stdout) as { seconds: number; gaps: number[] });
    }
    const code = await new Promise<number | null>((res) => client.once("exit", res));
    if (pinner) clearInterval(pinner);
    if (code !== 0) throw new Error(`tokenbench sweep exited ${code}: ${stderr.slice(-2000)}`);
    const wallS = (performance.now() - t0) / 1000;
    const doc = JSON.parse(readFileSync(out, "utf8")) as ResultDocument;
    const l = doc.levels[0]!;
    const lag = l.open_loop!.schedule_lag_ms;
    const records = readFileSync(join(dirname(out), doc.requests_file!), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as RequestRecord)
      .filter((r) => !r.warmup && r.intended_send_ms !== null);
    const over2Pct =
      (100 * records.filter((r) => r.send_ms - r.intended_send_ms! > 2).length) / records.length;
    const ok = lag.p99 !== null && lag.p99 <= TARGET_P99_MS;
    console.log(
      `trace replay, ${p.name}: ${l.requests} requests at ${rate} req/s (trace mean ${l.level} req/s), ${f(wallS, 1)} s with the CLI's start: replay lag p50 ${f(lag.p50!)} ms, p99 ${f(lag.p99!)} ms, max ${f(lag.max!)} ms; later than 2 ms ${f(over2Pct, 2)}% (p99 <= 2 ms needs < 1%); late (> 1 ms) ${l.open_loop!.late_arrivals}; errors ${l.errors}; client CPU ${f(l.client.cpu_pct_of_one_core ?? Number.NaN, 0)}% of a core${p.probe === null ? `  [${verdict(ok)}: p99 <= ${TARGET_P99_MS} ms]` : ""}`,
    );
    const result: Record<string, unknown> = {
      placement: p.key,
      requests: l.requests,
      errors: l.errors,
      replay_lag_ms: { p50: lag.p50, p99: lag.p99, max: lag.max },
      later_than_2ms_pct: over2Pct,
      late_arrivals: l.open_loop!.late_arrivals,
      client_cpu_pct: l.client.cpu_pct_of_one_core,
      pass: ok,
    };
    if (probe !== null) {
      const { seconds: probeS, gaps } = await probe;
      const kernelAfter = kernelThreadsMs();
      const lostPct = (100 * gaps.reduce((a, g) => a + Math.max(0, g - 2), 0)) / (probeS * 1000);
      const over2 = gaps.filter((g) => g > 2).length;
      const maxGapMs = Math.max(0, ...gaps);
      const kernel = [...kernelAfter]
        .map(([name, ms]) => [name, ms - (kernelBefore!.get(name) ?? 0)] as const)
        .filter(([, ms]) => ms >= 1)
        .sort((a, b) => b[1] - a[1]);
      console.log(
        `machine floor: a busy loop on CPU ${p.probe} (nothing of ours there) while the replay ran on CPU ${REST_CPU}, ${probeS} s: lost its CPU ${over2} times for > 2 ms (max ${f(maxGapMs, 1)} ms); a send due at a random moment there would be > 2 ms late ${f(lostPct, 2)}% of the time; kernel threads ran meanwhile (both CPUs): ${kernel.map(([n, ms]) => `${n} ${f(ms, 0)} ms`).join(", ") || "none"}`,
      );
      result.probe = {
        seconds: probeS,
        gaps_over_2ms: over2,
        max_gap_ms: maxGapMs,
        late_over_2ms_pct: lostPct,
        kernel_threads_ms: Object.fromEntries(kernel),
      };
    }
    return result;
  } finally {
    await mock.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), "tokenbench-replay-"));
try {
  const traceFile = join(dir, `synthetic-${rate}rps.jsonl`);
  writeFileSync(traceFile, syntheticTrace(Math.round(rate * seconds)));
  const pinning = await hasTaskset();
  const results = [];
  for (const p of PLACEMENTS) {
    if (only !== null && p.key !== only) continue;
    if (p.clientMain !== null && !pinning) {
      console.log(`trace replay, ${p.name}: skipped (needs Linux, 2 CPUs and taskset)`);
      continue;
    }
    results.push(await replay(p, traceFile, dir));
  }
  console.log(
    JSON.stringify({ bench: "replay", rate_rps: rate, target_p99_ms: TARGET_P99_MS, placements: results }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
