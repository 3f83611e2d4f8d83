/**
 * The mock inference server: OpenAI-compatible streaming with a timing and capacity model,
 * vLLM/SGLang/FreeToken/llama.cpp flavours, seeded faults and Prometheus `/metrics`.
 * Written on node:http alone and sharing nothing with src/core.
 */
import { randomBytes } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { DEFAULT_MOCK_OPTIONS, type FaultKind, type MockOptions } from "./options.ts";
import { PrefixCache } from "./prefix-cache.ts";
import { Exposition, Histogram, ITL_BUCKETS_S, LATENCY_BUCKETS_S } from "./prometheus.ts";
import { TimerQueue } from "./timer-queue.ts";
import { tokenize } from "./tokenizer.ts";

const VOCAB =
  "the of and to in is was for on that with as it by at from his her an be this are or which".split(" ");

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;

interface Req {
  seq: number;
  id: string;
  res: ServerResponse;
  chat: boolean;
  stream: boolean;
  includeUsage: boolean;
  serverTs: boolean;
  model: string;
  promptTokens: string[];
  cachedTokens: number;
  target: number;
  maxTokens: number;
  emitted: number;
  fault: FaultKind | null;
  tArrive: number;
  /** Arrival on the system monotonic clock (process.hrtime), for cross-process comparison. */
  tArriveHr: number;
  tAdmit: number;
  tFirst: number;
  tLast: number;
  /** Bumped on preemption so stale scheduled emissions are ignored. */
  gen: number;
  state: "queued" | "running" | "done";
  roleSent: boolean;
  text: string[];
  created: number;
}

export interface MockStats {
  requests: number;
  completed: number;
  rejected: number;
  cancelled: number;
  running: number;
  waiting: number;
  preemptions: number;
  events: number;
  faults: Record<string, number>;
  /** Emission lateness (actual - scheduled), ms. */
  lateness: { n: number; p50: number | null; p99: number | null; max: number | null };
}

export interface MockServer {
  url: string;
  port: number;
  options: MockOptions;
  stats(): MockStats;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = "invalid_request_error",
  ) {
    super(message);
  }
}

export async function start(partial: Partial<MockOptions> = {}): Promise<MockServer> {
  const o: MockOptions = { ...DEFAULT_MOCK_OPTIONS, ...partial };
  if (partial.port === undefined) o.port = 0;
  const engine = new Engine(o);
  const server = http.createServer({ keepAliveTimeout: 30_000, noDelay: true }, (req, res) => {
    engine.handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) engine.sendError(res, 500, String(err), "internal_error");
      else res.destroy();
    });
  });
  server.maxHeadersCount = 200;
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    port,
    options: o,
    stats: () => engine.stats(),
    close: async () => {
      engine.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

class Engine {
  private readonly timers = new TimerQueue();
  private readonly queue: Req[] = [];
  private readonly running = new Set<Req>();
  private readonly rand: () => number;
  private readonly faultRand: () => number;
  private readonly cache: PrefixCache;
  private readonly startedAt = performance.now();
  private seq = 0;
  private admitPending = false;
  private promptTotal = 0;
  private generationTotal = 0;
  private completed = 0;
  private rejected = 0;
  private cancelled = 0;
  private preemptions = 0;
  private events = 0;
  private readonly faultCounts: Record<string, number> = {};
  private readonly lateness: number[] = [];
  private readonly hTtft = new Histogram(LATENCY_BUCKETS_S);
  private readonly hItl = new Histogram(ITL_BUCKETS_S);
  private readonly hE2e = new Histogram(LATENCY_BUCKETS_S);
  private readonly hQueue = new Histogram(LATENCY_BUCKETS_S);
  private readonly hPrefill = new Histogram(LATENCY_BUCKETS_S);

  constructor(private readonly o: MockOptions) {
    this.rand = mulberry32(o.seed);
    this.faultRand = mulberry32(o.seed ^ 0x9e3779b9);
    this.cache = new PrefixCache(o.prefixCacheTokens, o.blockTokens);
  }

  close(): void {
    this.timers.close();
  }

  stats(): MockStats {
    const s = Float64Array.from(this.lateness).sort();
    const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]! : null);
    return {
      requests: this.seq,
      completed: this.completed,
      rejected: this.rejected,
      cancelled: this.cancelled,
      running: this.running.size,
      waiting: this.queue.length,
      preemptions: this.preemptions,
      events: this.events,
      faults: { ...this.faultCounts },
      lateness: { n: s.length, p50: q(0.5), p99: q(0.99), max: s.length ? s[s.length - 1]! : null },
    };
  }

  private loading(): boolean {
    return performance.now() - this.startedAt < this.o.loadTimeS * 1000;
  }

  private kvUsed(): number {
    let n = 0;
    for (const r of this.running) n += r.promptTokens.length + r.emitted;
    return n;
  }

  sendJson(res: ServerResponse, status: number, body: unknown): void {
    const s = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(s) });
    res.end(s);
  }

  sendError(res: ServerResponse, status: number, message: string, type: string): void {
    this.sendJson(res, status, { error: { message, type, param: null, code: status } });
  }

  private countFault(kind: string): void {
    this.faultCounts[kind] = (this.faultCounts[kind] ?? 0) + 1;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Arrival = request headers parsed, before the body is read (as a server's own clock sees it).
    const arrival = performance.now();
    const arrivalHr = hrMs();
    const url = (req.url ?? "/").split("?")[0]!;
    const f = this.o.flavor;
    const method = req.method ?? "GET";
    try {
      if (method === "POST" && (url === "/v1/chat/completions" || url === "/v1/completions")) {
        const body = await readJson(req);
        return this.completion(req, res, body, url === "/v1/chat/completions", arrival, arrivalHr);
      }
      if (method === "GET" && url === "/mock/stats") return this.sendJson(res, 200, this.stats());
      if (f === "minimal") throw new HttpError(404, `no route ${method} ${url}`, "not_found_error");
      if (method === "GET" && url === "/v1/models") return this.sendJson(res, 200, this.models());
      if (method === "GET" && url === "/health") return this.health(res);
      if (method === "GET" && url === "/metrics") return this.metrics(res);
      if (method === "POST" && url === "/v1/messages/count_tokens" && (f === "vllm" || f === "freetoken")) {
        const body = await readJson(req);
        return this.sendJson(res, 200, { input_tokens: this.promptOf(body, true).length });
      }
      if (method === "POST" && url === "/tokenize" && (f === "vllm" || f === "llamacpp" || f === "sglang")) {
        const body = await readJson(req);
        if (f === "llamacpp") {
          const content = typeof body.content === "string" ? body.content : "";
          return this.sendJson(res, 200, { tokens: tokenize(content).map((_, i) => i + 1) });
        }
        const toks = this.promptOf(body, body.messages !== undefined);
        return this.sendJson(res, 200, {
          count: toks.length,
          max_model_len: this.o.maxModelLen,
          tokens: toks.map((_, i) => i + 1),
        });
      }
      if (method === "GET") {
        const extra = this.flavorGet(url);
        if (extra !== undefined) return this.sendJson(res, 200, extra);
      }
      throw new HttpError(404, `no route ${method} ${url}`, "not_found_error");
    } catch (err) {
      if (err instanceof HttpError) return this.sendError(res, err.status, err.message, err.type);
      throw err;
    }
  }

  private models(): unknown {
    return {
      object: "list",
      data: [
        {
          id: this.o.model,
          object: "model",
          created: Math.floor(Date.now() / 1000),
          owned_by: this.o.flavor,
          max_model_len: this.o.maxModelLen,
        },
      ],
    };
  }

  private health(res: ServerResponse): void {
    const loading = this.loading();
    const f = this.o.flavor;
    if (f === "freetoken") {
      const progress = Math.min(
        1,
        (performance.now() - this.startedAt) / 1000 / Math.max(this.o.loadTimeS, 1e-9),
      );
      return this.sendJson(
        res,
        200,
        loading
          ? { status: "loading", maintenance: "loading", progress }
          : { status: "ok", maintenance: "serving" },
      );
    }
    if (f === "llamacpp") {
      if (loading) return this.sendError(res, 503, "Loading model", "unavailable_error");
      return this.sendJson(res, 200, { status: "ok" });
    }
    if (loading) return this.sendError(res, 503, "model loading", "unavailable_error");
    res.writeHead(200, { "content-length": 0 });
    res.end();
  }

  private limits(): Record<string, number | null> {
    return {
      max_running_requests: this.o.capacity,
      cuda_graph_max_bs: this.o.cudaGraphMaxBs,
      max_total_num_tokens: this.o.kvTokens || null,
    };
  }

  private flavorGet(url: string): unknown {
    const o = this.o;
    const f = o.flavor;
    if (f === "vllm" && url === "/version") return { version: "0.11.0+tokenbench.mock" };
    if (f === "sglang" && url === "/get_server_info") {
      return {
        version: "0.5.0+tokenbench.mock",
        model_path: o.model,
        context_length: o.maxModelLen,
        max_running_requests: o.capacity,
        cuda_graph_max_bs: o.cudaGraphMaxBs,
        max_total_num_tokens: o.kvTokens || null,
        page_size: o.blockTokens,
        enable_prefix_caching: o.prefixCacheTokens > 0,
      };
    }
    if (f === "sglang" && url === "/get_model_info") return { model_path: o.model, is_generation: true };
    if (f === "freetoken" && url === "/v1/cache/status") {
      return {
        prefix_cache: {
          enabled: o.prefixCacheTokens > 0,
          capacity_tokens: o.prefixCacheTokens,
          used_tokens: this.cache.usedTokens,
          block_tokens: o.blockTokens,
          hits: this.cache.hits,
          queries: this.cache.queries,
          hit_rate: this.cache.queryTokens ? this.cache.hitTokens / this.cache.queryTokens : 0,
        },
        kv_cache: {
          budget_tokens: o.kvTokens || null,
          used_tokens: this.kvUsed(),
          block_tokens: o.blockTokens,
        },
        reports_cached_tokens: true,
      };
    }
    if (f === "freetoken" && url === "/v1/stats") {
      return {
        server: { name: "freetoken", version: "0.9.0+tokenbench.mock" },
        model: { id: o.model, context_length: o.maxModelLen },
        gpus: [{ name: "Mock GPU", vram_mib: 0 }],
        requests_running: this.running.size,
        requests_waiting: this.queue.length,
        requests_total: this.seq,
        limits: this.limits(),
      };
    }
    if (f === "llamacpp" && url === "/props") {
      return {
        default_generation_settings: { n_ctx: o.maxModelLen, params: { n_predict: -1 } },
        total_slots: o.capacity,
        model_path: `/models/${o.model}.gguf`,
        build_info: "b0000-tokenbench-mock",
      };
    }
    if (f === "llamacpp" && url === "/slots") {
      const running = [...this.running];
      return Array.from({ length: o.capacity }, (_, i) => ({
        id: i,
        n_ctx: o.maxModelLen,
        is_processing: i < running.length,
      }));
    }
    return undefined;
  }

  private promptOf(body: Record<string, unknown>, chat: boolean): string[] {
    if (chat) {
      const msgs = body.messages;
      if (!Array.isArray(msgs) || msgs.length === 0)
        throw new HttpError(400, "'messages' must be a non-empty array");
      const parts: string[] = [];
      for (const m of msgs) {
        const c = (m as { content?: unknown } | null)?.content;
        if (typeof c === "string") parts.push(c);
        else if (Array.isArray(c)) {
          for (const p of c)
            if (typeof (p as { text?: unknown })?.text === "string") parts.push((p as { text: string }).text);
        } else throw new HttpError(400, "each message needs a string 'content'");
      }
      return tokenize(parts.join("\n"));
    }
    const p = body.prompt;
    if (typeof p === "string") return tokenize(p);
    if (Array.isArray(p) && p.every((x) => typeof x === "string")) return tokenize(p.join("\n"));
    throw new HttpError(400, "'prompt' must be a string");
  }

  private pickFault(seq: number): FaultKind | null {
    for (const f of this.o.faults) {
      if (f.every !== null && seq % f.every === 0) return f.kind;
      if (f.rate !== null && this.faultRand() < f.rate) return f.kind;
    }
    return null;
  }

  private completion(
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    chat: boolean,
    arrival: number,
    arrivalHr: number,
  ): void {
    const o = this.o;
    if (typeof body.model !== "string") throw new HttpError(400, "'model' is required");
    if (body.model !== o.model)
      throw new HttpError(400, `The model \`${body.model}\` does not exist.`, "NotFoundError");
    const promptTokens = this.promptOf(body, chat);
    if (promptTokens.length >= o.maxModelLen) {
      throw new HttpError(
        400,
        `prompt of ${promptTokens.length} tokens exceeds max_model_len ${o.maxModelLen}`,
      );
    }
    const maxTokens =
      typeof body.max_tokens === "number"
        ? body.max_tokens
        : typeof body.max_completion_tokens === "number"
          ? body.max_completion_tokens
          : o.defaultMaxTokens;
    if (!Number.isInteger(maxTokens) || maxTokens < 1)
      throw new HttpError(400, "'max_tokens' must be an integer >= 1");
    if (this.loading()) throw new HttpError(503, "model is still loading", "unavailable_error");
    const seq = ++this.seq;
    const fault = this.pickFault(seq);
    if (fault !== null) this.countFault(fault);
    if (fault === "http500")
      throw new HttpError(500, "injected fault: internal server error", "internal_error");
    if (fault === "http503")
      throw new HttpError(503, "injected fault: service unavailable", "unavailable_error");
    if (fault === "http429")
      throw new HttpError(429, "injected fault: too many requests", "rate_limit_error");
    if (o.maxQueue !== null && this.running.size >= o.capacity && this.queue.length >= o.maxQueue) {
      this.rejected++;
      throw new HttpError(o.rejectStatus, "server queue is full", "rate_limit_error");
    }
    const ignoreEos = body.ignore_eos === true;
    let target = maxTokens;
    if (!ignoreEos) {
      // Geometric with the configured mean, capped by max_tokens.
      const p = 1 / Math.max(1, o.meanOutputTokens);
      target = Math.min(maxTokens, 1 + Math.floor(Math.log(1 - this.rand()) / Math.log(1 - p)));
    }
    const so = body.stream_options as { include_usage?: unknown } | undefined;
    const now = performance.now();
    const r: Req = {
      seq,
      id: `${chat ? "chatcmpl" : "cmpl"}-${randomBytes(8).toString("hex")}`,
      res,
      chat,
      stream: body.stream === true,
      includeUsage: so?.include_usage === true,
      serverTs: o.serverTimestamps || req.headers["x-tokenbench-server-ts"] === "1",
      model: o.model,
      promptTokens,
      cachedTokens: 0,
      target,
      maxTokens,
      emitted: 0,
      fault,
      tArrive: arrival,
      tArriveHr: arrivalHr,
      tAdmit: 0,
      tFirst: 0,
      tLast: 0,
      gen: 0,
      state: "queued",
      roleSent: false,
      text: [],
      created: Math.floor(Date.now() / 1000),
    };
    this.promptTotal += promptTokens.length;
    res.on("close", () => {
      if (r.state !== "done") {
        this.cancelled++;
        this.finish(r, performance.now(), false);
      }
    });
    const begin = () => {
      if (r.stream) {
        const headers: Record<string, string> = {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
        };
        if (o.flavor === "llamacpp") headers.connection = "keep-alive";
        res.writeHead(200, headers);
        res.flushHeaders();
      }
      this.enqueue(r, performance.now());
    };
    if (fault === "slow_first_byte") this.timers.at(now + o.slowFirstByteMs, begin);
    else begin();
  }

  private enqueue(r: Req, t: number): void {
    if (r.state === "done") return;
    const someoneWaiting = this.queue.length > 0;
    this.queue.push(r);
    // A free slot takes a new arrival at once; behind a queue it waits its turn (FIFO).
    if (!someoneWaiting) this.admitWaiting(t);
  }

  /**
   * A slot freed while requests wait is filled at the scheduler's next iteration, one decode
   * step (ITL) later, as continuous-batching servers admit waiting requests between steps.
   */
  private scheduleAdmission(t: number): void {
    if (this.queue.length === 0 || this.admitPending) return;
    this.admitPending = true;
    const at = t + this.o.itlMs;
    this.timers.at(at, () => {
      this.admitPending = false;
      this.admitWaiting(at);
      if (this.queue.length > 0 && this.running.size < this.o.capacity) this.scheduleAdmission(at);
    });
  }

  private canAdmit(r: Req): boolean {
    if (this.running.size >= this.o.capacity) return false;
    if (this.o.kvTokens > 0 && this.running.size > 0) {
      return this.kvUsed() + r.promptTokens.length + r.emitted <= this.o.kvTokens;
    }
    return true;
  }

  private admitWaiting(t: number): void {
    while (this.queue.length > 0 && this.canAdmit(this.queue[0]!)) {
      const r = this.queue.shift()!;
      if (r.state === "done") continue;
      this.admit(r, t);
    }
  }

  private admit(r: Req, t: number): void {
    const o = this.o;
    r.state = "running";
    this.running.add(r);
    const resumed = r.emitted > 0;
    if (!resumed) {
      r.tAdmit = t;
      this.hQueue.observe((t - r.tArrive) / 1000);
      r.cachedTokens = this.cache.lookupAndInsert(r.promptTokens);
    }
    const uncached = resumed ? r.promptTokens.length + r.emitted : r.promptTokens.length - r.cachedTokens;
    const prefill = o.ttftMs + (o.prefillMsPer1k * uncached) / 1000;
    if (!resumed) this.hPrefill.observe(prefill / 1000);
    if (o.flavor === "freetoken" && r.stream && !r.roleSent) {
      // FreeToken sends the role chunk as soon as the request is admitted, before prefill.
      r.roleSent = true;
      r.res.write(this.roleChunk(r));
    }
    const gen = r.gen;
    this.timers.at(t + prefill, () => this.emit(r, t + prefill, gen));
  }

  private itl(): number {
    const o = this.o;
    let d = o.itlMs * (1 + o.itlGrowthPerRunning * Math.max(0, this.running.size - 1));
    if (o.itlJitterMs > 0) d += (this.rand() * 2 - 1) * o.itlJitterMs;
    return Math.max(0, d);
  }

  private chunkPrefix(r: Req): string {
    return `{"id":"${r.id}","object":"${r.chat ? "chat.completion.chunk" : "text_completion"}","created":${r.created},"model":${JSON.stringify(r.model)},"choices":`;
  }

  private roleChunk(r: Req): string {
    if (!r.chat) return "";
    return `data: ${this.chunkPrefix(r)}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`;
  }

  private contentChunk(
    r: Req,
    text: string,
    finish: string | null,
    usage: string | null,
    ts: number | null,
  ): string {
    const choice = r.chat
      ? `{"index":0,"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":${finish === null ? "null" : `"${finish}"`}}`
      : `{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${finish === null ? "null" : `"${finish}"`}}`;
    let s = `data: ${this.chunkPrefix(r)}[${choice}]`;
    if (usage !== null) s += `,"usage":${usage}`;
    if (ts !== null) {
      s += `,"tokenbench_server_ts_ms":${ts}`;
      if (r.emitted <= this.o.tokensPerChunk) s += `,"tokenbench_server_arrival_ts_ms":${r.tArriveHr}`;
    }
    return `${s}}\n\n`;
  }

  private usageJson(r: Req): string {
    const f = this.o.flavor;
    const u: Record<string, unknown> = {
      prompt_tokens: r.promptTokens.length,
      total_tokens: r.promptTokens.length + r.emitted,
      completion_tokens: r.emitted,
    };
    // FreeToken and SGLang omit the details object when nothing was cached.
    if (!((f === "freetoken" || f === "sglang") && r.cachedTokens === 0)) {
      u.prompt_tokens_details = { cached_tokens: r.cachedTokens };
    }
    return JSON.stringify(u);
  }

  /**
   * Emit the event due at `scheduled`, and every later event of this stream that is already due
   * (zero or tiny ITL, or after a stall in the event loop), in one socket write.
   */
  private emit(r: Req, scheduled: number, gen: number): void {
    let out = "";
    let t = scheduled;
    for (;;) {
      const now = performance.now();
      const step = this.step(r, t, now);
      out += step.out;
      if (step.reset) {
        // Flush what was generated so far, then drop the connection with a TCP RST.
        const res = r.res;
        this.finish(r, now, false);
        res.write(out, () => (res.socket ? res.socket.resetAndDestroy() : res.destroy()));
        return;
      }
      if (step.last) {
        if (out && r.stream) r.res.write(out);
        this.finish(r, now, true);
        return;
      }
      this.enforceKv();
      const next = t + this.itl() + step.extraDelayMs;
      if (r.state !== "running" || r.gen !== gen || next > performance.now()) {
        if (out && r.stream) r.res.write(out);
        if (r.state === "running" && r.gen === gen) this.timers.at(next, () => this.emit(r, next, gen));
        return;
      }
      t = next;
    }
  }

  /** One stream event: bookkeeping and its SSE text (nothing written here). */
  private step(
    r: Req,
    scheduled: number,
    now: number,
  ): { out: string; last: boolean; reset: boolean; extraDelayMs: number } {
    const o = this.o;
    if (this.lateness.length < 1_000_000) this.lateness.push(now - scheduled);
    const k = Math.min(o.tokensPerChunk, r.target - r.emitted);
    let text = "";
    for (let i = 0; i < k; i++) text += ` ${VOCAB[(r.emitted + i + r.seq) % VOCAB.length]}`;
    const first = r.emitted === 0;
    r.emitted += k;
    this.generationTotal += k;
    this.events++;
    if (first) {
      r.tFirst = now;
      this.hTtft.observe((now - r.tArrive) / 1000);
    } else {
      this.hItl.observe((now - r.tLast) / 1000);
    }
    r.tLast = now;
    const last = r.emitted >= r.target;
    const half = Math.floor(r.target / 2);
    const crossedHalf = r.emitted >= half && r.emitted - k < half;
    const extraDelayMs = r.fault === "stall" && crossedHalf ? o.stallS * 1000 : 0;
    if (!r.stream) {
      r.text.push(text);
      return { out: "", last, reset: false, extraDelayMs };
    }
    const ts = r.serverTs ? hrMs() : null;
    let out = "";
    if (first && !r.roleSent) {
      r.roleSent = true;
      out += this.roleChunk(r);
    }
    if (r.fault === "malformed" && r.emitted > r.target / 2 && r.emitted - k <= r.target / 2) {
      out += 'data: {"choices": [{"delta": {"content": "oops"\n\n';
    }
    const finish = last ? (r.target < r.maxTokens ? "stop" : "length") : null;
    const f = o.flavor;
    if (last && f === "sglang" && r.includeUsage && r.fault !== "no_usage") {
      out += this.contentChunk(r, text, finish, this.usageJson(r), ts);
    } else if (last && f === "llamacpp") {
      out += this.contentChunk(r, text, null, null, ts);
      const usage = r.includeUsage && r.fault !== "no_usage" ? this.usageJson(r) : null;
      const timings = JSON.stringify({
        prompt_n: r.promptTokens.length - r.cachedTokens,
        prompt_ms: r.tFirst - r.tAdmit,
        predicted_n: r.emitted,
        predicted_ms: now - r.tFirst,
      });
      let fin = `data: ${this.chunkPrefix(r)}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"${finish}"}]`;
      if (usage !== null) fin += `,"usage":${usage}`;
      out += `${fin},"timings":${timings}}\n\n`;
    } else {
      out += this.contentChunk(r, text, finish, null, ts);
      if (last && r.includeUsage && r.fault !== "no_usage") {
        out += `data: ${this.chunkPrefix(r)}[],"usage":${this.usageJson(r)}}\n\n`;
      }
    }
    if (last && r.fault !== "no_done") out += "data: [DONE]\n\n";
    const reset = r.fault === "reset" && !last && r.emitted >= Math.max(1, half);
    return { out, last, reset, extraDelayMs };
  }

  /** Over the KV budget: preempt the most recently admitted request (recompute policy). */
  private enforceKv(): void {
    const budget = this.o.kvTokens;
    if (budget <= 0) return;
    while (this.running.size > 1 && this.kvUsed() > budget) {
      let victim: Req | null = null;
      for (const x of this.running) if (victim === null || x.tAdmit >= victim.tAdmit) victim = x;
      if (victim === null) return;
      this.running.delete(victim);
      victim.state = "queued";
      victim.gen++;
      this.preemptions++;
      this.queue.unshift(victim);
    }
  }

  private finish(r: Req, t: number, ok: boolean): void {
    if (r.state === "done") return;
    const wasRunning = r.state === "running";
    r.state = "done";
    r.gen++;
    if (wasRunning) this.running.delete(r);
    else {
      const i = this.queue.indexOf(r);
      if (i >= 0) this.queue.splice(i, 1);
    }
    if (ok) {
      this.completed++;
      this.hE2e.observe((t - r.tArrive) / 1000);
      if (r.stream) {
        r.res.end();
        if (this.o.flavor === "llamacpp") {
          // llama.cpp closes the connection after each stream although it advertised keep-alive.
          r.res.once("finish", () => r.res.socket?.destroy());
        }
      } else {
        const text = r.text.join("");
        const finish = r.target < r.maxTokens ? "stop" : "length";
        const choice = r.chat
          ? { index: 0, message: { role: "assistant", content: text }, finish_reason: finish }
          : { index: 0, text, finish_reason: finish };
        this.sendJson(r.res, 200, {
          id: r.id,
          object: r.chat ? "chat.completion" : "text_completion",
          created: r.created,
          model: r.model,
          choices: [choice],
          usage: JSON.parse(this.usageJson(r)),
        });
      }
    }
    this.scheduleAdmission(t);
  }

  private metrics(res: ServerResponse): void {
    const f = this.o.flavor;
    const e = new Exposition(f === "llamacpp" ? {} : { model_name: this.o.model });
    const running = this.running.size;
    const waiting = this.queue.length;
    const kv = this.o.kvTokens > 0 ? this.kvUsed() / this.o.kvTokens : 0;
    if (f === "vllm") {
      e.metric(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        running,
      );
      e.metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", waiting);
      e.metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", kv);
      e.metric(
        "vllm:prompt_tokens_total",
        "counter",
        "Number of prefill tokens processed.",
        this.promptTotal,
      );
      e.metric(
        "vllm:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        this.generationTotal,
      );
      e.metric(
        "vllm:num_preemptions_total",
        "counter",
        "Cumulative number of preemption from the engine.",
        this.preemptions,
      );
      e.metric(
        "vllm:prefix_cache_queries_total",
        "counter",
        "Prefix cache queries, in tokens.",
        this.cache.queryTokens,
      );
      e.metric(
        "vllm:prefix_cache_hits_total",
        "counter",
        "Prefix cache hits, in tokens.",
        this.cache.hitTokens,
      );
      e.metric("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", 1, {
        block_size: String(this.o.blockTokens),
        enable_prefix_caching: String(this.o.prefixCacheTokens > 0),
      });
      e.histogram(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        this.hTtft,
      );
      e.histogram(
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        this.hItl,
      );
      e.histogram(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        this.hE2e,
      );
      e.histogram(
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase.",
        this.hQueue,
      );
      e.histogram(
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase.",
        this.hPrefill,
      );
    } else if (f === "sglang") {
      e.metric("sglang:num_running_reqs", "gauge", "The number of running requests.", running);
      e.metric("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", waiting);
      e.metric("sglang:token_usage", "gauge", "The token usage.", kv);
      e.metric(
        "sglang:prompt_tokens_total",
        "counter",
        "Number of prefill tokens processed.",
        this.promptTotal,
      );
      e.metric(
        "sglang:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        this.generationTotal,
      );
      e.metric(
        "sglang:cache_hit_rate",
        "gauge",
        "The prefix cache hit rate.",
        this.cache.queryTokens ? this.cache.hitTokens / this.cache.queryTokens : 0,
      );
      e.histogram(
        "sglang:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        this.hTtft,
      );
      e.histogram(
        "sglang:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        this.hItl,
      );
      e.histogram(
        "sglang:e2e_request_latency_seconds",
        "Histogram of End-to-end request latency in seconds",
        this.hE2e,
      );
      e.histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", this.hQueue);
    } else if (f === "freetoken") {
      e.metric("freetoken:requests_running", "gauge", "Requests being decoded.", running);
      e.metric("freetoken:requests_waiting", "gauge", "Requests waiting for a slot.", waiting);
      e.metric("freetoken:kv_cache_usage_ratio", "gauge", "KV cache usage, 0..1.", kv);
      e.metric("freetoken:prompt_tokens_total", "counter", "Prompt tokens processed.", this.promptTotal);
      e.metric("freetoken:generation_tokens_total", "counter", "Tokens generated.", this.generationTotal);
      e.histogram("freetoken:time_to_first_token_seconds", "Time to first token.", this.hTtft);
      e.histogram("freetoken:request_queue_time_seconds", "Time spent waiting for a slot.", this.hQueue);
    } else if (f === "llamacpp") {
      e.metric("llamacpp:requests_processing", "gauge", "Number of requests processing.", running);
      e.metric("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", waiting);
      e.metric("llamacpp:kv_cache_usage_ratio", "gauge", "KV-cache usage. 1 means 100 percent usage.", kv);
      e.metric("llamacpp:kv_cache_tokens", "gauge", "KV-cache tokens.", this.kvUsed());
      e.metric(
        "llamacpp:prompt_tokens_total",
        "counter",
        "Number of prompt tokens processed.",
        this.promptTotal,
      );
      e.metric(
        "llamacpp:tokens_predicted_total",
        "counter",
        "Number of generation tokens processed.",
        this.generationTotal,
      );
    }
    e.series(
      "tokenbench_mock_faults_total",
      "counter",
      "Faults injected by the mock, by kind.",
      Object.entries(this.faultCounts).map(([kind, n]) => [{ kind }, n]),
    );
    e.metric(
      "tokenbench_mock_rejected_total",
      "counter",
      "Requests rejected because the queue was full.",
      this.rejected,
    );
    const s = e.text();
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
    res.end(s);
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 64 * 1024 * 1024) throw new HttpError(413, "request body too large");
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new HttpError(400, "request body is not valid JSON");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new HttpError(400, "request body must be a JSON object");
  return v as Record<string, unknown>;
}
