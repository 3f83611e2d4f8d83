// Harness speed (issue #2): client CPU per event, overhead per event, TTFT/ITL error against the
// server's own timestamps, open-loop schedule lag, RSS per 1,000 in-flight streams.
// Usage: npm run build && npx tsx bench/client.ts [--quick]

import net from "node:net";
import { performance } from "node:perf_hooks";
import { StreamClient } from "../src/core/client/stream-client.ts";
import { runClosedLoop, runOpenLoop } from "../src/core/load/loops.ts";
import { makeTarget } from "../src/core/server/target.ts";
import { type Child, f, pct, rawChatRequest, spawnMock, verdict } from "./lib.ts";

const quick = process.argv.includes("--quick");
/** The mock for the streaming figures: TTFT 20 ms, 10 ms between tokens, no slot limit, no cache. */
const STREAMING_MOCK = [
  "--ttft-ms",
  "20",
  "--itl-ms",
  "10",
  "--capacity",
  "10000",
  "--prefix-cache-tokens",
  "0",
];
const results: Record<string, unknown> = {};

function newClient(
  url: string,
  origin = performance.now(),
  headers: Record<string, string> = { "x-tokenbench-server-ts": "1" },
) {
  return new StreamClient({
    target: makeTarget({ baseUrl: url, api: "chat", model: "mock-model", apiKey: null, headers }),
    timeoutS: 120,
    ignoreEos: true,
    extraBody: {},
    originMs: origin,
  });
}

let nextId = 0;
const spec = (maxTokens: number, intended: number | null = null) => ({
  id: nextId++,
  level: 1,
  warmup: false,
  prompt: "bench prompt with a few words",
  maxTokens,
  promptTokensRequested: 5,
  intendedSendAbsMs: intended,
});

async function cpuPerEvent(): Promise<void> {
  const mock = await spawnMock([
    "--ttft-ms",
    "0",
    "--itl-ms",
    "0",
    "--capacity",
    "10000",
    "--prefix-cache-tokens",
    "0",
  ]);
  const c = newClient(mock.url, performance.now(), {});
  const streams = 256;
  const tokens = quick ? 400 : 2000;
  // One full round first: JIT warm-up and 256 open connections; the figure is steady state.
  await Promise.all(Array.from({ length: streams }, () => c.stream(spec(tokens))));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const recs = await Promise.all(Array.from({ length: streams }, () => c.stream(spec(tokens))));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const events = recs.reduce((n, r) => n + r.event_count, 0);
  const errors = recs.filter((r) => r.error).length;
  const usPerEvent = (cpu.user + cpu.system) / events;
  console.log(
    `(a) zero-delay ingest: ${events} events over ${streams} streams in ${f(wall, 2)} s, errors ${errors}: ` +
      `${f(usPerEvent, 2)} us client CPU/event [target <= 5: ${verdict(usPerEvent <= 5)}], ${f(events / wall, 0)} events/s`,
  );
  results.cpu_us_per_event = usPerEvent;
  results.ingest_events_per_s = events / wall;
  await c.close();
  await mock.stop();
}

async function overheadAt(mock: Child, streams: number, tokens: number): Promise<void> {
  const c = newClient(mock.url);
  // Closed loop: `streams` users, each sending 3 requests back to back, on connections opened by
  // a warm-up round, so starts are staggered as in a real sweep (not one synchronized burst).
  await runClosedLoop(c, () => spec(2), { concurrency: streams, requests: streams, durationS: null });
  const run = await runClosedLoop(c, () => spec(tokens), {
    concurrency: streams,
    requests: 3 * streams,
    durationS: null,
  });
  const recs = run.records;
  const over: number[] = [];
  const ttftErr: number[] = [];
  const itlErr: number[] = [];
  const sendDelay: number[] = [];
  for (const r of recs) {
    const s = r.server_event_times_ms ?? [];
    for (let i = 0; i < s.length; i++) over.push(r.event_times_ms[i]! - s[i]!);
    if (r.dispatch_ms !== undefined) sendDelay.push(r.send_ms - r.dispatch_ms);
    if (r.server_arrival_ms !== undefined && s.length > 0) {
      const clientTtft = r.first_token_ms! - r.send_ms;
      const serverTtft = s[0]! - r.server_arrival_ms;
      ttftErr.push(clientTtft - serverTtft);
    }
    for (let i = 1; i < s.length; i++) {
      itlErr.push(r.event_times_ms[i]! - r.event_times_ms[i - 1]! - (s[i]! - s[i - 1]!));
    }
  }
  const errors = recs.filter((r) => r.error).length;
  const p50 = pct(over, 0.5);
  const p99 = pct(over, 0.99);
  const tp50 = pct(ttftErr, 0.5);
  const ip50 = pct(itlErr.map(Math.abs), 0.5);
  const ip99 = pct(itlErr.map(Math.abs), 0.99);
  const targets =
    streams === 1000
      ? ` [targets p50 <= 0.2: ${verdict(p50 <= 0.2)}, p99 <= 1: ${verdict(p99 <= 1)}]`
      : streams === 256
        ? ` [TTFT error target p50 <= 1: ${verdict(tp50 <= 1)}]`
        : "";
  console.log(
    `(b,c) ${streams} streams (closed loop, 3 requests each) x ${tokens} tokens @10 ms, errors ${errors}: overhead server-send->client-receive p50 ${f(p50)} ms p99 ${f(p99)} ms; ` +
      `TTFT error (client TTFT from the socket write - server's own TTFT from arrival) p50 ${f(tp50)} ms p99 ${f(pct(ttftErr, 0.99))} ms; ` +
      `client queue before the socket write (excluded from TTFT, reported) p50 ${f(pct(sendDelay, 0.5))} ms p99 ${f(pct(sendDelay, 0.99))} ms; ` +
      `|ITL error| p50 ${f(ip50)} ms p99 ${f(ip99)} ms${targets}`,
  );
  results[`overhead_ms_c${streams}`] = { p50, p99 };
  results[`ttft_error_ms_c${streams}`] = { p50: tp50, p99: pct(ttftErr, 0.99) };
  results[`client_send_queue_ms_c${streams}`] = { p50: pct(sendDelay, 0.5), p99: pct(sendDelay, 0.99) };
  results[`itl_abs_error_ms_c${streams}`] = { p50: ip50, p99: ip99 };
  await c.close();
}

async function scheduleLag(rate: number, seconds: number): Promise<void> {
  const mock = await spawnMock(["--ttft-ms", "1", "--itl-ms", "1", "--capacity", "100000"]);
  const c = newClient(mock.url, performance.now(), {});
  await Promise.all(Array.from({ length: 64 }, () => c.stream(spec(2))));
  const run = await runOpenLoop(c, (i, _w, intended) => ({ ...spec(4, intended), id: i }), {
    rateRps: rate,
    arrival: "poisson",
    burstiness: 1,
    seed: 1,
    requests: rate * seconds,
    durationS: null,
    maxInFlight: null,
  });
  const lags = run.records.map((r) => r.send_ms - r.intended_send_ms!);
  const sends = run.records.map((r) => r.send_ms).sort((a, b) => a - b);
  const intended = run.records.map((r) => r.intended_send_ms!).sort((a, b) => a - b);
  const achieved = (sends.length - 1) / ((sends.at(-1)! - sends[0]!) / 1000);
  const planned = (intended.length - 1) / ((intended.at(-1)! - intended[0]!) / 1000);
  const errors = run.records.filter((r) => r.error).length;
  const p99 = pct(lags, 0.99);
  const rateErr = Math.abs(achieved - planned) / planned;
  console.log(
    `(d) open loop ${rate} req/s x ${seconds} s (poisson), errors ${errors}: schedule lag p50 ${f(pct(lags, 0.5))} ms p99 ${f(p99)} ms; ` +
      `achieved ${f(achieved, 1)} req/s vs the seeded schedule's ${f(planned, 1)} (${f(rateErr * 100, 2)} %)` +
      (rate === 1000
        ? ` [targets p99 <= 2: ${verdict(p99 <= 2)}, rate within 1 %: ${verdict(rateErr <= 0.01)}]`
        : ""),
  );
  results[`schedule_lag_ms_${rate}rps`] = {
    p50: pct(lags, 0.5),
    p99,
    achieved_rps: achieved,
    planned_rps: planned,
  };
  await c.close();
  await mock.stop();
}

async function rssPer1000(): Promise<void> {
  const mock = await spawnMock(["--ttft-ms", "0", "--itl-ms", "200", "--capacity", "10000"]);
  const c = newClient(mock.url, performance.now(), {});
  await Promise.all(Array.from({ length: 16 }, () => c.stream(spec(2))));
  const before = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  const n = 1000;
  const all = Array.from({ length: n }, () => c.stream(spec(30)));
  await new Promise((r) => setTimeout(r, 3000)); // all 1,000 connected and streaming
  const during = process.memoryUsage().rss;
  const heapDuring = process.memoryUsage().heapUsed;
  const recs = await Promise.all(all);
  const mb = (during - before) / 1024 / 1024;
  console.log(
    `(e) RSS: ${f(mb, 1)} MB more with ${n} streams in flight (JS heap +${f((heapDuring - heapBefore) / 1024 / 1024, 1)} MB; errors ${recs.filter((r) => r.error).length}) [target <= 64: ${verdict(mb <= 64)}]`,
  );
  results.rss_mb_per_1000_streams = mb;
  await c.close();
  await mock.stop();
}

/** The machine's floor: CPU per read for a do-nothing raw-socket reader of the same streams. */
async function rawReaderFloor(): Promise<void> {
  const mock = await spawnMock(STREAMING_MOCK);
  const u = new URL(mock.url);
  const req = rawChatRequest(quick ? 50 : 200);
  let reads = 0;
  const one = () =>
    new Promise<void>((res) => {
      const s = net.connect(Number(u.port), u.hostname, () => s.write(req));
      s.on("data", (d: Buffer) => {
        reads++;
        if (d.includes("[DONE]")) {
          s.destroy();
          res();
        }
      });
    });
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: 256 }, one));
  const cpu = process.cpuUsage(cpu0);
  const us = (cpu.user + cpu.system) / reads;
  console.log(
    `(f) machine floor: a raw net.Socket reader that only counts reads spends ${f(us, 1)} us CPU per read ` +
      `(${reads} reads, 256 streams @10 ms); one event per read is the norm at 10 ms ITL, so 1,000 streams ` +
      `(100,000 reads/s) need ${f((us * 100_000) / 1e6, 2)} cores before any parsing`,
  );
  results.raw_reader_us_per_read = us;
  await mock.stop();
}

await rssPer1000(); // first, in a fresh process: later phases leave a large heap behind
await rawReaderFloor();
await cpuPerEvent();
const mock = await spawnMock(STREAMING_MOCK);
for (const n of [1, 256, 1000]) await overheadAt(mock, n, quick ? 20 : 50);
await mock.stop();
await scheduleLag(100, quick ? 3 : 10);
await scheduleLag(1000, quick ? 3 : 10);
console.log(JSON.stringify({ bench: "client", ...results }));
