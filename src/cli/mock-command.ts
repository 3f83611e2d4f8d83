/** `tokenbench mockserver`: the fake inference server from the command line. */
import {
  anyInt,
  boolean,
  list,
  nonNeg,
  nonNegInt,
  number,
  oneOf,
  positive,
  positiveInt,
  text,
} from "../core/settings/setting.ts";
import {
  DEFAULT_MOCK_OPTIONS as D,
  FAULT_KINDS,
  FLAVORS,
  type MockOptions,
  PROTOCOL_VARIANTS,
  type ProtocolVariant,
  parseFault,
  REASONING_FIELDS,
  start,
} from "../mock/index.ts";

function parseProtocol(s: string): ProtocolVariant {
  const v = s.trim() as ProtocolVariant;
  if (!PROTOCOL_VARIANTS.includes(v))
    throw new Error(`invalid protocol variant "${s}": expected one of ${PROTOCOL_VARIANTS.join(", ")}`);
  return v;
}

import { parseCommand } from "./command.ts";

// The mock's flags, declared with the same machinery as every other setting. Their defaults are
// the mock's own (src/mock/options.ts): the mock shares no code with the harness.
const ms = (flag: string, def: number, help: string) =>
  number<number>({
    flag,
    input: null,
    metavar: "MS",
    default: def,
    check: nonNeg,
    what: "a non-negative number",
    help,
  });
const MOCK = {
  host: text<string>({ flag: "host", input: null, metavar: "H", default: D.host, help: "bind address" }),
  port: number<number>({
    flag: "port",
    input: null,
    default: D.port,
    check: (n) => Number.isInteger(n) && n >= 0 && n < 65536,
    what: "a port number",
    help: "port (0 = any free port)",
  }),
  flavor: oneOf({
    flag: "flavor",
    input: null,
    choices: FLAVORS,
    default: D.flavor,
    help: "endpoints, metric names and stream quirks",
  }),
  model: text<string>({
    flag: "model",
    input: null,
    metavar: "ID",
    default: D.model,
    help: "served model name",
  }),
  answerVariant: number<number>({
    flag: "answer-variant",
    input: null,
    metavar: "N",
    default: D.answerVariant,
    check: anyInt,
    what: "an integer",
    help: "which answers the model gives at temperature 0 (greedy: a function of the prompt); another variant answers every prompt otherwise, as a changed model or kernel might",
  }),
  serverVersion: text<string | null>({
    flag: "server-version",
    input: null,
    metavar: "V",
    default: D.serverVersion,
    help: "the version the server reports of itself (/version, /get_server_info, /v1/stats), e.g. to try an environment change",
  }),
  ttftMs: ms("ttft-ms", D.ttftMs, "base time to first token"),
  prefillMsPer1k: ms("prefill-ms-per-1k", D.prefillMsPer1k, "extra prefill per 1,000 uncached prompt tokens"),
  itlMs: ms("itl-ms", D.itlMs, "time between stream events"),
  itlJitterMs: ms("itl-jitter-ms", D.itlJitterMs, "seeded uniform jitter +/- MS per event"),
  ttftJitterMs: ms(
    "ttft-jitter-ms",
    D.ttftJitterMs,
    "seeded exponential extra time to first token with mean MS per request (a tail, so TTFT p99 varies between runs with different --seed)",
  ),
  tokensPerChunk: number<number>({
    flag: "tokens-per-chunk",
    input: null,
    metavar: "K",
    default: D.tokensPerChunk,
    check: positiveInt,
    what: "a positive integer",
    help: "tokens per event, like speculative decoding",
  }),
  capacity: number<number>({
    flag: "capacity",
    input: null,
    default: D.capacity,
    check: positiveInt,
    what: "a positive integer",
    help: "running slots; more requests queue FIFO",
  }),
  maxQueue: number<number | null>({
    flag: "max-queue",
    input: null,
    default: D.maxQueue,
    defaultText: "unbounded",
    check: nonNegInt,
    what: "a non-negative integer",
    help: "reject beyond N waiting requests",
  }),
  rejectStatus: number<429 | 503>({
    flag: "reject-status",
    input: null,
    metavar: "429|503",
    default: D.rejectStatus,
    check: (n) => n === 429 || n === 503,
    what: "429 or 503",
    help: "status for rejected requests",
  }),
  itlGrowthPerRunning: number<number>({
    flag: "itl-growth-per-running",
    input: null,
    metavar: "F",
    default: D.itlGrowthPerRunning,
    check: nonNeg,
    what: "a non-negative number",
    help: "ITL x (1 + F x (running - 1))",
  }),
  kvTokens: number<number>({
    flag: "kv-tokens",
    input: null,
    default: D.kvTokens,
    check: nonNegInt,
    what: "a non-negative integer",
    help: "KV budget in tokens; drives kv usage and preemption (0 = unlimited)",
  }),
  prefixCacheTokens: number<number>({
    flag: "prefix-cache-tokens",
    input: null,
    default: D.prefixCacheTokens,
    check: nonNegInt,
    what: "a non-negative integer",
    help: "prefix cache size (0 = off)",
  }),
  meanOutputTokens: number<number>({
    flag: "mean-output-tokens",
    input: null,
    default: D.meanOutputTokens,
    check: positive,
    what: "a positive number",
    help: "mean output length without ignore_eos",
  }),
  loadTimeS: number<number>({
    flag: "load-time-s",
    input: null,
    metavar: "S",
    default: D.loadTimeS,
    check: nonNeg,
    what: "a non-negative number",
    help: 'report "loading" for S seconds after start',
  }),
  serverTimestamps: boolean({
    flag: "server-timestamps",
    input: null,
    switch: true,
    default: D.serverTimestamps,
    help: "send tokenbench_server_ts_ms in every chunk (also per request: header x-tokenbench-server-ts: 1)",
  }),
  reasoningTokens: number<number>({
    flag: "reasoning-tokens",
    input: null,
    metavar: "N",
    default: D.reasoningTokens,
    check: nonNegInt,
    what: "a non-negative integer",
    help: "a reasoning model: the first N tokens of every answer are thinking (counted in completion_tokens)",
  }),
  reasoningField: oneOf({
    flag: "reasoning-field",
    input: null,
    choices: REASONING_FIELDS,
    default: D.reasoningField,
    help: "how thinking is sent: delta.reasoning_content (vLLM, SGLang, DeepSeek), delta.reasoning (newer vLLM), or inline <think> tags",
  }),
  reasoningUsage: boolean({
    flag: "reasoning-usage",
    input: null,
    switch: true,
    default: D.reasoningUsage,
    help: "report usage.completion_tokens_details.reasoning_tokens",
  }),
  protocol: list({
    flag: "protocol",
    input: null,
    metavar: "VARIANT",
    default: D.protocol,
    item: parseProtocol,
    help: `write the event stream another way the SSE standard allows: ${PROTOCOL_VARIANTS.join(" ")}`,
  }),
  faults: list({
    flag: "fault",
    input: null,
    metavar: "KIND:RATE|KIND@N",
    default: D.faults,
    item: parseFault,
    help: `seeded faults: ${FAULT_KINDS.join(" ")}`,
  }),
  stallS: number<number>({
    flag: "stall-s",
    input: null,
    metavar: "S",
    default: D.stallS,
    check: nonNeg,
    what: "a non-negative number",
    help: "stall length",
  }),
  slowFirstByteMs: ms("slow-first-byte-ms", D.slowFirstByteMs, "first-byte delay"),
  cudaGraphMaxBs: number<number | null>({
    flag: "cuda-graph-max-bs",
    input: null,
    default: D.cudaGraphMaxBs,
    check: positiveInt,
    what: "a positive integer",
    help: "limit to advertise (sglang/freetoken)",
  }),
  maxModelLen: number<number>({
    flag: "max-model-len",
    input: null,
    default: D.maxModelLen,
    check: positiveInt,
    what: "a positive integer",
    help: "context length",
  }),
  seed: number<number>({
    flag: "seed",
    input: null,
    default: D.seed,
    check: anyInt,
    what: "an integer",
    help: "seed",
  }),
};

/** Mock options from argv, or null when --help was printed. */
export function mockOptionsFrom(argv: string[]): MockOptions | null {
  const p = parseCommand(
    argv,
    MOCK,
    `tokenbench mockserver: an OpenAI-compatible fake inference server

Its capacity follows from its configuration: a request holds one of --capacity slots from its
admission through --ttft-ms (plus --prefill-ms-per-1k) and n - 1 more tokens at --itl-ms, and the
freed slot is refilled one --itl-ms later, so it sustains
  capacity / (ttft + n x itl) requests per second for n output tokens
(16 slots, 60 ms, 12 ms, 32 tokens: 16 / 0.444 s = 36.0 req/s), with --itl-growth-per-running 0,
no KV budget and no prefill cost.`,
  );
  if (p === null) return null;
  return { ...D, ...p.values };
}

export async function mockCommand(argv: string[]): Promise<number> {
  const opts = mockOptionsFrom(argv);
  if (opts === null) return 0;
  const server = await start(opts);
  process.stderr.write(
    `tokenbench mockserver (${opts.flavor}) listening on ${server.url}: model ${opts.model}, TTFT ${opts.ttftMs} ms, ITL ${opts.itlMs} ms, capacity ${opts.capacity} (sustains ${opts.capacity} / (TTFT + n x ITL) req/s for n output tokens)\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  return 0;
}
