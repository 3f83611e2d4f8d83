/** `tokenbench mockserver`: the fake inference server from the command line. */
import { DEFAULT_MOCK_OPTIONS, FLAVORS, type MockOptions, parseFault, start } from "../mock/index.ts";
import {
  bool,
  nonNeg,
  nonNegInt,
  num,
  oneOf,
  parse,
  positive,
  positiveInt,
  str,
  UsageError,
} from "./args.ts";

export const MOCK_HELP = `tokenbench mockserver: an OpenAI-compatible fake inference server

  --host H                  bind address (default 127.0.0.1)
  --port N                  (default 8001; 0 = any free port)
  --flavor vllm|sglang|freetoken|llamacpp|minimal  endpoints, metric names and stream quirks (default vllm)
  --model ID                served model name (default mock-model)
  --ttft-ms MS              base time to first token (default 80)
  --prefill-ms-per-1k MS    extra prefill per 1,000 uncached prompt tokens (default 0)
  --itl-ms MS               time between stream events (default 12)
  --itl-jitter-ms MS        seeded uniform jitter +/- MS per event (default 0)
  --tokens-per-chunk K      tokens per event, like speculative decoding (default 1)
  --capacity N              running slots; more requests queue FIFO (default 32)
  --max-queue N             reject beyond N waiting requests (default unbounded)
  --reject-status 429|503   status for rejected requests (default 503)
  --itl-growth-per-running F  ITL x (1 + F x (running - 1)) (default 0)
  --kv-tokens N             KV budget in tokens; drives kv usage and preemption (default 0 = unlimited)
  --prefix-cache-tokens N   prefix cache size (default 65536; 0 = off)
  --mean-output-tokens N    mean output length without ignore_eos (default 128)
  --load-time-s S           report "loading" for S seconds after start (default 0)
  --server-timestamps true|false  send tokenbench_server_ts_ms in every chunk (also per request: header x-tokenbench-server-ts: 1)
  --fault KIND:RATE | KIND@N  seeded faults (repeatable): http500 http503 http429 reset stall malformed no_usage no_done slow_first_byte
  --stall-s S               stall length (default 2)
  --slow-first-byte-ms MS   first-byte delay (default 1000)
  --cuda-graph-max-bs N     limit to advertise (sglang/freetoken)
  --max-model-len N         (default 32768)
  --seed N                  (default 1)
`;

export function mockOptionsFrom(argv: string[]): MockOptions {
  const { values: v } = parse(argv, {
    host: { type: "string" },
    port: { type: "string" },
    flavor: { type: "string" },
    model: { type: "string" },
    "ttft-ms": { type: "string" },
    "prefill-ms-per-1k": { type: "string" },
    "itl-ms": { type: "string" },
    "itl-jitter-ms": { type: "string" },
    "tokens-per-chunk": { type: "string" },
    capacity: { type: "string" },
    "max-queue": { type: "string" },
    "reject-status": { type: "string" },
    "itl-growth-per-running": { type: "string" },
    "kv-tokens": { type: "string" },
    "prefix-cache-tokens": { type: "string" },
    "mean-output-tokens": { type: "string" },
    "load-time-s": { type: "string" },
    "server-timestamps": { type: "string" },
    fault: { type: "string", multiple: true },
    "stall-s": { type: "string" },
    "slow-first-byte-ms": { type: "string" },
    "cuda-graph-max-bs": { type: "string" },
    "max-model-len": { type: "string" },
    seed: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (v.help) throw new HelpRequested();
  const d = DEFAULT_MOCK_OPTIONS;
  const faultList = Array.isArray(v.fault) ? v.fault : [];
  const faults = faultList.map((f) => {
    try {
      return parseFault(String(f));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  });
  const reject = num(v, "reject-status", d.rejectStatus, (n) => n === 429 || n === 503, "429 or 503")!;
  return {
    host: str(v, "host", d.host),
    port: num(v, "port", d.port, (n) => Number.isInteger(n) && n >= 0 && n < 65536, "a port number")!,
    flavor: oneOf(v, "flavor", FLAVORS, d.flavor),
    model: str(v, "model", d.model),
    maxModelLen: num(v, "max-model-len", d.maxModelLen, positiveInt, "a positive integer")!,
    ttftMs: num(v, "ttft-ms", d.ttftMs, nonNeg, "a non-negative number")!,
    prefillMsPer1k: num(v, "prefill-ms-per-1k", d.prefillMsPer1k, nonNeg, "a non-negative number")!,
    itlMs: num(v, "itl-ms", d.itlMs, nonNeg, "a non-negative number")!,
    itlJitterMs: num(v, "itl-jitter-ms", d.itlJitterMs, nonNeg, "a non-negative number")!,
    tokensPerChunk: num(v, "tokens-per-chunk", d.tokensPerChunk, positiveInt, "a positive integer")!,
    capacity: num(v, "capacity", d.capacity, positiveInt, "a positive integer")!,
    maxQueue: num(v, "max-queue", d.maxQueue, nonNegInt, "a non-negative integer"),
    rejectStatus: reject as 429 | 503,
    itlGrowthPerRunning: num(
      v,
      "itl-growth-per-running",
      d.itlGrowthPerRunning,
      nonNeg,
      "a non-negative number",
    )!,
    kvTokens: num(v, "kv-tokens", d.kvTokens, nonNegInt, "a non-negative integer")!,
    prefixCacheTokens: num(
      v,
      "prefix-cache-tokens",
      d.prefixCacheTokens,
      nonNegInt,
      "a non-negative integer",
    )!,
    blockTokens: d.blockTokens,
    meanOutputTokens: num(v, "mean-output-tokens", d.meanOutputTokens, positive, "a positive number")!,
    defaultMaxTokens: d.defaultMaxTokens,
    seed: num(v, "seed", d.seed, Number.isInteger, "an integer")!,
    loadTimeS: num(v, "load-time-s", d.loadTimeS, nonNeg, "a non-negative number")!,
    serverTimestamps: bool(v, "server-timestamps", d.serverTimestamps),
    faults,
    stallS: num(v, "stall-s", d.stallS, nonNeg, "a non-negative number")!,
    slowFirstByteMs: num(v, "slow-first-byte-ms", d.slowFirstByteMs, nonNeg, "a non-negative number")!,
    cudaGraphMaxBs: num(v, "cuda-graph-max-bs", d.cudaGraphMaxBs, positiveInt, "a positive integer"),
  };
}

export class HelpRequested extends Error {}

export async function mockCommand(argv: string[]): Promise<number> {
  let opts: MockOptions;
  try {
    opts = mockOptionsFrom(argv);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(MOCK_HELP);
      return 0;
    }
    throw err;
  }
  const server = await start(opts);
  process.stderr.write(
    `tokenbench mockserver (${opts.flavor}) listening on ${server.url}: model ${opts.model}, TTFT ${opts.ttftMs} ms, ITL ${opts.itlMs} ms, capacity ${opts.capacity}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  return 0;
}
