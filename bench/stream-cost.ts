// Client CPU per chunk in the case users have (every chunk its own socket read: 100 tok/s per
// stream), side by side in one run with the machine's floor (a bare net.Socket reader of the same
// streams that only counts its reads), at 16 and 256 streams; then the same for each stream shape
// (reasoning in either field, inline <think> tags, tool calls, the Responses API) against plain
// chat. The mock runs in its own process.
// Usage: npm run build && npx tsx bench/stream-cost.ts [--quick]
import net from "node:net";
import { performance } from "node:perf_hooks";
import { warmUpClientPath } from "../src/core/client/jit-warmup.ts";
import { type ClientConfig, StreamClient } from "../src/core/client/stream-client.ts";
import { makeTarget } from "../src/core/server/target.ts";
import { f, spawnMock } from "./lib.ts";

const quick = process.argv.includes("--quick");
const TOKENS = quick ? 100 : 300;
const ROUNDS = quick ? 1 : 3;
const MOCK = ["--ttft-ms", "20", "--itl-ms", "10", "--capacity", "100000", "--prefix-cache-tokens", "0"];
const TOOLS = { tools: [{ type: "function" as const, function: { name: "lookup" } }], choice: "lookup" };

interface Shape {
  name: string;
  mock: string[];
  api: "chat" | "responses";
  client: Partial<ClientConfig>;
  body: Record<string, unknown>;
}
const SHAPES: Shape[] = [
  { name: "chat", mock: [], api: "chat", client: {}, body: {} },
  {
    name: "reasoning_content",
    mock: ["--reasoning-tokens", String(TOKENS / 2)],
    api: "chat",
    client: {},
    body: {},
  },
  {
    name: "think tags",
    mock: ["--reasoning-tokens", String(TOKENS / 2), "--reasoning-field", "think"],
    api: "chat",
    client: { reasoningTags: "think" },
    body: {},
  },
  {
    name: "tool calls",
    mock: [],
    api: "chat",
    client: { tools: TOOLS },
    body: { tools: TOOLS.tools, tool_choice: "required" },
  },
  { name: "responses", mock: [], api: "responses", client: {}, body: {} },
];

function rawRequest(api: "chat" | "responses", extra: Record<string, unknown>): string {
  const input = [{ role: "user", content: "bench" }];
  const body = JSON.stringify({
    model: "mock-model",
    ...(api === "chat"
      ? { messages: input, max_tokens: TOKENS, stream_options: { include_usage: true } }
      : { input, max_output_tokens: TOKENS }),
    ignore_eos: true,
    stream: true,
    ...extra,
  });
  const path = api === "chat" ? "/v1/chat/completions" : "/v1/responses";
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The floor: `streams` raw sockets that count reads; CPU per read (one chunk per read at 10 ms). */
async function floor(url: string, streams: number, req: string): Promise<{ us: number; reads: number }> {
  const u = new URL(url);
  let reads = 0;
  const one = () =>
    new Promise<void>((res) => {
      const s = net.connect(Number(u.port), u.hostname, () => s.write(req));
      let tail = "";
      s.on("data", (d: Buffer) => {
        reads++;
        // the end of the chunked body (the mock ends every stream with it); a read may split it
        tail = (tail + d.toString("latin1")).slice(-16);
        if (tail.endsWith("\r\n0\r\n\r\n")) {
          s.destroy();
          res();
        }
      });
    });
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: streams }, one));
  const cpu = process.cpuUsage(cpu0);
  return { us: (cpu.user + cpu.system) / reads, reads };
}

/** tokenbench: `streams` requests at once through one StreamClient; CPU per content event. */
async function client(
  c: StreamClient,
  streams: number,
): Promise<{ us: number; errors: number; eventsPerRead: number }> {
  let id = 0;
  const spec = () => ({
    id: id++,
    level: 1,
    warmup: false,
    prompt: "bench",
    maxTokens: TOKENS,
    promptTokensRequested: null,
    intendedSendAbsMs: null,
  });
  const cpu0 = process.cpuUsage();
  const recs = await Promise.all(Array.from({ length: streams }, () => c.stream(spec())));
  const cpu = process.cpuUsage(cpu0);
  const events = recs.reduce((n, r) => n + r.event_times_ms.length, 0);
  return {
    us: (cpu.user + cpu.system) / events,
    errors: recs.filter((r) => r.error).length,
    eventsPerRead: 1,
  };
}

const results: Record<string, unknown> = {};
for (const shape of SHAPES) {
  if (quick && shape.name !== "chat" && shape.name !== "responses") continue;
  const mock = await spawnMock([...MOCK, ...shape.mock]);
  const cfg: ClientConfig = {
    target: makeTarget({ baseUrl: mock.url, api: shape.api, model: "mock-model", apiKey: null, headers: {} }),
    timeoutS: 120,
    ignoreEos: true,
    extraBody: {},
    originMs: performance.now(),
    ...shape.client,
  };
  await warmUpClientPath(cfg);
  const c = new StreamClient(cfg);
  const req = rawRequest(shape.api, shape.body);
  for (const streams of [16, 256]) {
    await client(c, streams); // connections and a warm path first
    const ours: number[] = [];
    const base: number[] = [];
    let errors = 0;
    let readsPerChunk = 0;
    for (let k = 0; k < ROUNDS; k++) {
      const fl = await floor(mock.url, streams, req);
      base.push(fl.us);
      readsPerChunk = fl.reads / (streams * TOKENS);
      const r = await client(c, streams);
      ours.push(r.us);
      errors += r.errors;
    }
    // the median round of each: one round now and then meets a busy moment of the VM
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const o = med(ours);
    const b = med(base);
    console.log(
      `${shape.name.padEnd(18)} ${String(streams).padStart(3)} streams: tokenbench ${f(o, 1)} us CPU per chunk, floor ${f(b, 1)} us per read (${f(readsPerChunk, 2)} reads per chunk), ratio ${f(o / b, 2)} [target <= 1.5: ${o / b <= 1.5 ? "PASS" : "MISS"}] (rounds: ${ours.map((x) => f(x, 1)).join(", ")} vs ${base.map((x) => f(x, 1)).join(", ")}; errors ${errors})`,
    );
    results[`${shape.name.replace(/ /g, "_")}_${streams}`] = {
      us_per_chunk: o,
      floor_us_per_read: b,
      ratio: o / b,
    };
  }
  await c.close();
  await mock.stop();
}
console.log(JSON.stringify({ bench: "stream-cost", tokens: TOKENS, rounds: ROUNDS, ...results }));
