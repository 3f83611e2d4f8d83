// Trace replay (#13): how closely the sender keeps a trace's times. A Mooncake-style trace of
// Poisson arrivals at 200 req/s (shared 512-token blocks, ~600-token prompts, 16 output tokens)
// is replayed against the mock in its own process; replay lag = actual send (the socket write)
// minus the scheduled send. Target: p99 <= 2 ms at 200 req/s.
//   npx tsx bench/replay.ts [--quick] [--rate 200] [--seconds 10]
import { performance } from "node:perf_hooks";
import { runSweep } from "../src/core/sweep.ts";
import { defaultSweepConfig } from "../src/core/sweep-plan.ts";
import { makeTarget } from "../src/core/target.ts";
import { parseTrace, traceReplay } from "../src/core/trace.ts";
import { rng } from "../src/shared/random.ts";
import { f, spawnMock, verdict } from "./lib.ts";

const quick = process.argv.includes("--quick");
const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? d : Number(process.argv[i + 1]);
};
const rate = arg("--rate", 200);
const seconds = arg("--seconds", quick ? 4 : 10);
const outputTokens = arg("--output-tokens", 16);

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

const nice = arg("--mock-nice", 10);
const pin = process.argv.includes("--pin");
const mock = await spawnMock(["--ttft-ms", "20", "--itl-ms", "5", "--capacity", "100000"], {
  nice,
  ...(pin ? { cpu: 1 } : {}),
});
try {
  const trace = parseTrace(syntheticTrace(Math.round(rate * seconds)), "synthetic-200rps.jsonl");
  const config = defaultSweepConfig({ mode: "open", warmup_requests: 100, metrics_interval_ms: null });
  const replay = traceReplay(trace, config, 1, null);
  const t0 = performance.now();
  const doc = await runSweep({
    target: makeTarget({ baseUrl: mock.url, api: "chat", model: "mock-model", apiKey: null, headers: {} }),
    config,
    out: null,
    records: "none",
    resume: false,
    dataset: replay.build(null, 0),
  });
  const wallS = (performance.now() - t0) / 1000;
  const l = doc.levels[0]!;
  const lag = l.open_loop!.schedule_lag_ms;
  const ok = lag.p99 !== null && lag.p99 <= 2;
  console.log(
    `trace replay, ${l.requests} requests at ${rate} req/s (trace mean ${config.levels[0]} req/s), ${f(wallS, 1)} s: replay lag p50 ${f(lag.p50!)} ms, p99 ${f(lag.p99!)} ms, max ${f(lag.max!)} ms; late (> 1 ms) ${l.open_loop!.late_arrivals}; errors ${l.errors}; client CPU ${f(l.client.cpu_pct_of_one_core ?? Number.NaN, 0)}% of a core  [${verdict(ok)}: p99 <= 2 ms]`,
  );
  console.log(
    JSON.stringify({
      bench: "replay",
      rate_rps: rate,
      requests: l.requests,
      errors: l.errors,
      replay_lag_ms: { p50: lag.p50, p99: lag.p99, max: lag.max },
      late_arrivals: l.open_loop!.late_arrivals,
      client_cpu_pct: l.client.cpu_pct_of_one_core,
      target_p99_ms: 2,
      pass: ok,
    }),
  );
} finally {
  await mock.stop();
}
