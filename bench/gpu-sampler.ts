// What the GPU sampler costs the measured client: the same level (64 streams × 100 tok/s, 300
// tokens each, every chunk its own read, the mock in its own process) with `--gpu-sample-ms 100`
// (the fake nvidia-smi of the tests first on PATH: one long-lived process printing two GPUs every
// 100 ms) and without, alternating, 3 rounds each. Per round: the client's CPU per chunk (its
// self-check's CPU over the level) and the delivery lag (client receive time minus the mock's own
// send time) p50 / p99. The target: the difference of the medians within the run-to-run spread.
// Usage: npm run build && npx tsx bench/gpu-sampler.ts [--quick]

import { fakeNvidiaSmiPath } from "../scripts/fake-gpu.ts";
import { preflight } from "../src/core/server/preflight.ts";
import { makeTarget } from "../src/core/server/target.ts";
import { defaultSweepConfig } from "../src/core/sweep/config.ts";
import { runSweep } from "../src/core/sweep/sweep.ts";
import { f, pct, spawnMock } from "./lib.ts";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 3;
process.env.PATH = fakeNvidiaSmiPath();
process.env.FAKE_SMI_GPUS = "0:300,1:150";

async function round(sampleMs: number | null) {
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
    levels: [64],
    requests_per_level: 128,
    max_tokens: quick ? 100 : 300,
    warmup_requests: 32,
    ignore_eos: true,
    metrics_interval_ms: null,
    timeout_s: 300,
  });
  if (sampleMs === null) delete config.gpu_telemetry;
  else config.gpu_telemetry = { sample_ms: sampleMs, gpus: null, hour_cost_usd: null, metrics_url: null };
  const pre = await preflight(target, null, {
    readyTimeoutS: 10,
    serverLimits: {},
    calibrate: false,
    onNotice: () => {},
  });
  const doc = await runSweep({ pre, config, out: null, records: "inline", resume: false });
  await mock.stop();
  const level = doc.levels[0]!;
  const recs = (doc.requests ?? []).filter((r) => !r.warmup && r.error === null);
  const chunks = recs.reduce((a, r) => a + r.event_count, 0);
  const lag: number[] = [];
  for (const r of recs) {
    const s = r.server_event_times_ms ?? [];
    for (let i = 0; i < s.length; i++) lag.push(r.event_times_ms[i]! - s[i]!);
  }
  return {
    us_per_chunk: ((level.client.cpu_user_s + level.client.cpu_system_s) * 1e6) / chunks,
    lag_p50_ms: pct(lag, 0.5),
    lag_p99_ms: pct(lag, 0.99),
    gpu_samples: doc.gpu_telemetry?.samples?.length ?? 0,
  };
}

const on: Awaited<ReturnType<typeof round>>[] = [];
const off: Awaited<ReturnType<typeof round>>[] = [];
for (let i = 0; i < ROUNDS; i++) {
  for (const [list, ms] of [
    [off, null],
    [on, 100],
  ] as const) {
    const r = await round(ms);
    list.push(r);
    console.log(
      `${ms === null ? "sampler off" : "--gpu-sample-ms 100"}: ${f(r.us_per_chunk, 2)} µs/chunk, lag p50 ${f(r.lag_p50_ms, 3)} p99 ${f(r.lag_p99_ms, 2)} ms${ms === null ? "" : ` (${r.gpu_samples} GPU reads)`}`,
    );
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
const rows = (["us_per_chunk", "lag_p50_ms", "lag_p99_ms"] as const).map((k) => {
  const a = on.map((r) => r[k]);
  const b = off.map((r) => r[k]);
  const diff = med(a) - med(b);
  const noise = Math.max(spread(a), spread(b));
  return { measure: k, on: med(a), off: med(b), diff, noise, within: Math.abs(diff) <= noise };
});
for (const r of rows)
  console.log(
    `${r.measure}: on ${f(r.on, 3)}, off ${f(r.off, 3)}, difference ${f(r.diff, 3)} vs run-to-run spread ${f(r.noise, 3)}: ${r.within ? "PASS" : "MISS"}`,
  );
console.log(
  JSON.stringify({ bench: "gpu-sampler", rounds: ROUNDS, rows, pass: rows.every((r) => r.within) }),
);
