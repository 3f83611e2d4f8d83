// Mock server precision and speed (issue #3), read by an independent raw-socket reader (no
// undici, no src/core): delivered TTFT and ITL vs configured at 1, 100 and 1,000 streams, and
// the events/s the mock emits with zero delays.
// Usage: npm run build && npx tsx bench/mock.ts [--quick]
import net from "node:net";
import { performance } from "node:perf_hooks";
import { f, pct, rawChatRequest, spawnMock, verdict } from "./lib.ts";

const quick = process.argv.includes("--quick");
const results: Record<string, unknown> = {};

interface Reading {
  sendMs: number;
  eventTimes: number[];
}

/** One streamed request over a raw socket; timestamps each read, counts content events in it. */
function rawStream(port: number, maxTokens: number, onConnected?: () => void): Promise<Reading> {
  const req = rawChatRequest(maxTokens, { close: true });
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1");
    const out: Reading = { sendMs: 0, eventTimes: [] };
    let tail = "";
    s.setNoDelay(true);
    s.on("connect", () => {
      onConnected?.();
      out.sendMs = performance.now();
      s.write(req);
    });
    s.on("data", (d: Buffer) => {
      const t = performance.now();
      const text = tail + d.toString("latin1");
      let i = text.indexOf('"content":"');
      let last = 0;
      while (i !== -1) {
        // a content event with non-empty text (the role chunk has "content":"")
        if (text[i + 11] !== '"') out.eventTimes.push(t);
        last = i + 11;
        i = text.indexOf('"content":"', last);
      }
      tail = text.slice(Math.max(last, text.length - 16));
      if (text.includes("[DONE]")) s.end();
    });
    s.on("close", () => resolve(out));
    s.on("error", reject);
  });
}

async function precision(streams: number, tokens: number): Promise<void> {
  const mock = await spawnMock([
    "--ttft-ms",
    "80",
    "--itl-ms",
    "12",
    "--capacity",
    "100000",
    "--prefix-cache-tokens",
    "0",
  ]);
  const port = Number(new URL(mock.url).port);
  await Promise.all(Array.from({ length: Math.min(streams, 50) }, () => rawStream(port, 2)));
  const readings = await Promise.all(Array.from({ length: streams }, () => rawStream(port, tokens)));
  const ttft = readings.map((r) => r.eventTimes[0]! - r.sendMs);
  const itl: number[] = [];
  for (const r of readings)
    for (let i = 1; i < r.eventTimes.length; i++) itl.push(r.eventTimes[i]! - r.eventTimes[i - 1]!);
  const st = (await (await fetch(`${mock.url}/mock/stats`)).json()) as {
    lateness: { p50: number; p99: number };
  };
  const itlP50 = pct(itl, 0.5);
  const complete = readings.filter((r) => r.eventTimes.length === tokens).length;
  console.log(
    `${streams} streams x ${tokens} tokens (configured TTFT 80 ms, ITL 12 ms; ${complete}/${streams} complete): ` +
      `TTFT p50 ${f(pct(ttft, 0.5), 2)} p99 ${f(pct(ttft, 0.99), 2)} ms; ITL p50 ${f(itlP50)} p99 ${f(pct(itl, 0.99))} ms; ` +
      `mock's own emit lateness p50 ${f(st.lateness.p50)} p99 ${f(st.lateness.p99)} ms` +
      (streams === 1000
        ? ` [target ITL p50 within +/-0.3 ms of 12: ${verdict(Math.abs(itlP50 - 12) <= 0.3)}]`
        : ""),
  );
  results[`c${streams}`] = {
    ttft_p50_ms: pct(ttft, 0.5),
    ttft_p99_ms: pct(ttft, 0.99),
    itl_p50_ms: itlP50,
    itl_p99_ms: pct(itl, 0.99),
    emit_lateness_p50_ms: st.lateness.p50,
    emit_lateness_p99_ms: st.lateness.p99,
  };
  await mock.stop();
}

async function zeroDelay(): Promise<void> {
  const mock = await spawnMock([
    "--ttft-ms",
    "0",
    "--itl-ms",
    "0",
    "--capacity",
    "100000",
    "--prefix-cache-tokens",
    "0",
  ]);
  const port = Number(new URL(mock.url).port);
  const streams = 64;
  const tokens = quick ? 5000 : 20000;
  await Promise.all(Array.from({ length: 8 }, () => rawStream(port, 1000)));
  const t0 = performance.now();
  const readings = await Promise.all(Array.from({ length: streams }, () => rawStream(port, tokens)));
  const wall = (performance.now() - t0) / 1000;
  const events = readings.reduce((n, r) => n + r.eventTimes.length, 0);
  const rate = events / wall;
  console.log(
    `zero delay: ${events} events over ${streams} streams in ${f(wall, 2)} s = ${f(rate, 0)} events/s [target >= 200,000: ${verdict(rate >= 200_000)}]`,
  );
  results.zero_delay_events_per_s = rate;
  await mock.stop();
}

for (const n of [1, 100, 1000]) await precision(n, quick ? 20 : 40);
await zeroDelay();
console.log(JSON.stringify({ bench: "mock", ...results }));
