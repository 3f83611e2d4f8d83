/** Mock server options, their defaults, and the parser of `--fault` specifications. */
export type Flavor = "vllm" | "sglang" | "freetoken" | "llamacpp" | "minimal";
export const FLAVORS: readonly Flavor[] = ["vllm", "sglang", "freetoken", "llamacpp", "minimal"];

export type FaultKind =
  | "http500"
  | "http503"
  | "http429"
  | "reset"
  | "stall"
  | "malformed"
  | "no_usage"
  | "no_done"
  | "slow_first_byte"
  | "error_event"
  | "error_body"
  | "early_stop"
  | "huge_usage"
  | "two_choices"
  | "cache_all"
  | "leak"
  | "zombie";
export const FAULT_KINDS: readonly FaultKind[] = [
  "http500",
  "http503",
  "http429",
  "reset",
  "stall",
  "malformed",
  "no_usage",
  "no_done",
  "slow_first_byte",
  // an `event: error` frame halfway, then the end of the stream
  "error_event",
  // a 200 whose body is a JSON error instead of a stream
  "error_body",
  // ignore_eos ignored: stop with "stop" at half of max_tokens
  "early_stop",
  // usage.completion_tokens of 10^15
  "huge_usage",
  // every content chunk carries a second choice (index 1), as n = 2 would
  "two_choices",
  // every prompt reported cached and its prefill skipped, as a response cache would (unasked)
  "cache_all",
  // a request whose client went away keeps its slot: never freed, as a leaking server's
  "leak",
  // a request whose client went away is freed in the server's account but decodes on out of sight:
  // every later request's time to first token grows by half the base TTFT per such zombie
  "zombie",
];

/** Ways of writing the event stream that the SSE standard allows and servers use. */
export type ProtocolVariant =
  | "cr"
  | "crlf"
  | "bom"
  | "no-space"
  | "multiline"
  | "comments"
  | "ids"
  | "after-done"
  | "early-hints";
export const PROTOCOL_VARIANTS: readonly ProtocolVariant[] = [
  "cr",
  "crlf",
  "bom",
  "no-space",
  "multiline",
  "comments",
  "ids",
  "after-done",
  "early-hints",
];

/** Where a reasoning model's thinking goes in a chat stream. */
export type ReasoningField = "reasoning_content" | "reasoning" | "think";
export const REASONING_FIELDS: readonly ReasoningField[] = ["reasoning_content", "reasoning", "think"];

/** `kind:rate` (probability per request, seeded) or `kind@n` (every n-th request). */
export interface FaultSpec {
  kind: FaultKind;
  rate: number | null;
  every: number | null;
}

export function parseFault(s: string): FaultSpec {
  const m = /^([a-z0-9_]+)(?::([0-9.]+)|@([0-9]+))$/.exec(s.trim());
  if (!m || !FAULT_KINDS.includes(m[1] as FaultKind)) {
    throw new Error(
      `invalid fault "${s}": expected KIND:RATE or KIND@N with KIND one of ${FAULT_KINDS.join(", ")}`,
    );
  }
  const rate = m[2] !== undefined ? Number(m[2]) : null;
  const every = m[3] !== undefined ? Number(m[3]) : null;
  if (rate !== null && !(rate >= 0 && rate <= 1))
    throw new Error(`invalid fault "${s}": rate must be in [0, 1]`);
  if (every !== null && !(every >= 1)) throw new Error(`invalid fault "${s}": N must be >= 1`);
  return { kind: m[1] as FaultKind, rate, every };
}

export interface MockOptions {
  host: string;
  port: number;
  flavor: Flavor;
  model: string;
  maxModelLen: number;
  /** Base time to first token, ms. */
  ttftMs: number;
  /** Extra prefill cost per 1,000 uncached prompt tokens, ms. */
  prefillMsPer1k: number;
  /** Time between stream events, ms. */
  itlMs: number;
  /** Uniform seeded jitter, +/- ms, added to each ITL. */
  itlJitterMs: number;
  /**
   * Seeded exponential extra time to first token with this mean, ms, per request: a tail like a
   * real server's, so a run's TTFT p99 varies from run to run (with another --seed) as it does there.
   */
  ttftJitterMs: number;
  /** Tokens carried by each content event (speculative decoding imitation). */
  tokensPerChunk: number;
  /** Running slots; more requests wait in a FIFO queue. */
  capacity: number;
  /** Queue length beyond which requests are rejected; null = unbounded. */
  maxQueue: number | null;
  rejectStatus: 429 | 503;
  /** ITL multiplier growth per running request beyond the first (0.02 = +2 % each). */
  itlGrowthPerRunning: number;
  /** KV budget in tokens (0 = unlimited): drives kv usage and preemption. */
  kvTokens: number;
  prefixCacheTokens: number;
  blockTokens: number;
  /** Mean output length when ignore_eos is off (geometric, capped by max_tokens). */
  meanOutputTokens: number;
  defaultMaxTokens: number;
  seed: number;
  /** Which answers the model gives at temperature 0 (another variant answers every prompt otherwise). */
  answerVariant: number;
  /** The version the server reports of itself (null: the flavour's own "+tokenbench.mock" version). */
  serverVersion: string | null;
  /** Seconds of "loading" after start: health says so and completions get 503. */
  loadTimeS: number;
  /** Put the server's monotonic send time (`tokenbench_server_ts_ms`) into every chunk. */
  serverTimestamps: boolean;
  faults: FaultSpec[];
  stallS: number;
  slowFirstByteMs: number;
  /** Server limits to advertise (sglang/freetoken/llamacpp expose them). */
  cudaGraphMaxBs: number | null;
  /** A reasoning model: the first N tokens of every answer are thinking (0: none). */
  reasoningTokens: number;
  /** How the thinking is sent: `delta.reasoning_content`, `delta.reasoning`, or inline `<think>` tags. */
  reasoningField: ReasoningField;
  /** Report `completion_tokens_details.reasoning_tokens` in the usage. */
  reasoningUsage: boolean;
  /** How the event stream is written (line ends, BOM, fields; see PROTOCOL_VARIANTS). */
  protocol: ProtocolVariant[];
}

export const DEFAULT_MOCK_OPTIONS: MockOptions = {
  host: "127.0.0.1",
  port: 8001,
  flavor: "vllm",
  model: "mock-model",
  maxModelLen: 32768,
  ttftMs: 80,
  prefillMsPer1k: 0,
  itlMs: 12,
  itlJitterMs: 0,
  ttftJitterMs: 0,
  tokensPerChunk: 1,
  capacity: 32,
  maxQueue: null,
  rejectStatus: 503,
  itlGrowthPerRunning: 0,
  kvTokens: 0,
  prefixCacheTokens: 65536,
  blockTokens: 16,
  meanOutputTokens: 128,
  defaultMaxTokens: 256,
  seed: 1,
  serverVersion: null,
  answerVariant: 0,
  loadTimeS: 0,
  serverTimestamps: false,
  faults: [],
  stallS: 2,
  slowFirstByteMs: 1000,
  cudaGraphMaxBs: null,
  reasoningTokens: 0,
  reasoningField: "reasoning_content",
  reasoningUsage: false,
  protocol: [],
};

/** The faults that are an HTTP error answer: status, message and OpenAI error type. */
export const HTTP_FAULTS: Partial<Record<FaultKind, [number, string, string]>> = {
  http500: [500, "injected fault: internal server error", "internal_error"],
  http503: [503, "injected fault: service unavailable", "unavailable_error"],
  http429: [429, "injected fault: too many requests", "rate_limit_error"],
};
