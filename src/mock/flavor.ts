/**
 * What makes one server flavour different from another, as data and small functions: routes,
 * health, usage details, the final chunk, metric names and connection behaviour. The engine
 * knows nothing of flavours; each flavour module (flavors/*.ts) fills this interface.
 */
import type { Piece } from "./chunks.ts";
import type { MockOptions } from "./options.ts";
import type { PrefixCache } from "./prefix-cache.ts";
import type { Exposition, Histogram } from "./prometheus.ts";

/** What the engine exposes to flavours (read-only state and counters). */
export interface EngineView {
  readonly o: MockOptions;
  readonly running: number;
  readonly waiting: number;
  readonly requestsTotal: number;
  readonly promptTotal: number;
  readonly generationTotal: number;
  readonly preemptions: number;
  readonly cache: PrefixCache;
  readonly startedAtMs: number;
  kvUsed(): number;
  /** KV usage 0..1 (0 without a KV budget). */
  kvRatio(): number;
  loading(): boolean;
  readonly h: {
    ttft: Histogram;
    itl: Histogram;
    e2e: Histogram;
    queue: Histogram;
    prefill: Histogram;
    decode: Histogram;
  };
}

/** One stream's state as flavours see it when they write its last event. */
export interface StreamView {
  promptTokens: number;
  cachedTokens: number;
  emitted: number;
  includeUsage: boolean;
  /** The usage JSON of this stream (flavour-specific details already applied). */
  usage: string;
  /** Server-side times, ms (monotonic): admission, first token, now. */
  tAdmit: number;
  tFirst: number;
  now: number;
}

export interface ChunkText {
  /** `data: {...,"choices":` prefix of this stream's chunks. */
  prefix: string;
  /** A content chunk: its tokens, finish reason, usage JSON (or null). */
  content(piece: Piece, finish: string | null, usage: string | null): string;
}

export interface HealthAnswer {
  status: number;
  /** JSON body, or null for an empty 200; with `error`, an OpenAI-style error of that message. */
  body: unknown;
  error?: string;
}

export interface FlavorModule {
  /** Flavours without the common GET routes (/v1/models, /health, /metrics) answer 404 there. */
  readonly commonRoutes: boolean;
  /** The role chunk goes out at admission, before prefill (FreeToken), not with the first token. */
  readonly roleChunkAtAdmission: boolean;
  /** Omit usage.prompt_tokens_details when nothing was cached (FreeToken, SGLang). */
  readonly omitCachedDetailsWhenZero: boolean;
  /** Close the connection after each stream although keep-alive was advertised (llama.cpp). */
  readonly closeAfterStream: boolean;
  /** Extra response headers of a stream. */
  readonly streamHeaders: Readonly<Record<string, string>>;
  /** Labels on every metric. */
  metricLabels(o: MockOptions): Record<string, string>;
  health(e: EngineView): HealthAnswer;
  /** Flavour-specific GET routes (JSON), or undefined. */
  get(url: string, e: EngineView): unknown;
  /** Flavour-specific POST routes (JSON) given the request's prompt tokens, or undefined. */
  post(
    url: string,
    body: Record<string, unknown>,
    promptOf: (chat: boolean) => string[],
    e: EngineView,
  ): unknown;
  /** The last event(s) of a stream before [DONE]: the final content and the usage. */
  lastEvents(c: ChunkText, s: StreamView, piece: Piece, finish: string): string;
  metrics(x: Exposition, e: EngineView): void;
}

/** The common final events: the last content chunk, then a usage-only chunk when asked for. */
export function standardLastEvents(c: ChunkText, s: StreamView, piece: Piece, finish: string): string {
  let out = c.content(piece, finish, null);
  if (s.includeUsage) out += `data: ${c.prefix}[],"usage":${s.usage}}\n\n`;
  return out;
}

export const plainHealth = (e: EngineView): HealthAnswer =>
  e.loading() ? { status: 503, body: null, error: "model loading" } : { status: 200, body: null };

/** Metric names of the five common gauges and counters, `[name, help]` each. */
export interface CoreMetricNames {
  running: [string, string];
  waiting: [string, string];
  kv: [string, string];
  prompt: [string, string];
  generation: [string, string];
}

export function coreMetrics(x: Exposition, e: EngineView, n: CoreMetricNames): void {
  x.metric(n.running[0], "gauge", n.running[1], e.running);
  x.metric(n.waiting[0], "gauge", n.waiting[1], e.waiting);
  x.metric(n.kv[0], "gauge", n.kv[1], e.kvRatio());
  x.metric(n.prompt[0], "counter", n.prompt[1], e.promptTotal);
  x.metric(n.generation[0], "counter", n.generation[1], e.generationTotal);
}

/** Latency histograms by name prefix: `[suffix, help]` for each histogram the flavour exposes. */
export function histograms(
  x: Exposition,
  e: EngineView,
  prefix: string,
  list: Partial<Record<keyof EngineView["h"], [string, string]>>,
): void {
  for (const [key, [suffix, help]] of Object.entries(list) as [keyof EngineView["h"], [string, string]][])
    x.histogram(`${prefix}${suffix}`, help, e.h[key]);
}

/** A flavour: the common behaviour, with what this server does differently. */
export function flavor(over: Partial<FlavorModule>): FlavorModule {
  return {
    commonRoutes: true,
    roleChunkAtAdmission: false,
    omitCachedDetailsWhenZero: false,
    closeAfterStream: false,
    streamHeaders: {},
    metricLabels: (o) => ({ model_name: o.model }),
    health: plainHealth,
    get: () => undefined,
    post: () => undefined,
    lastEvents: standardLastEvents,
    metrics: () => {},
    ...over,
  };
}
