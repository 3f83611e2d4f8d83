/**
 * Streaming client for OpenAI-compatible servers, on undici's low-level dispatch API so every
 * read is timestamped the moment it arrives (no async-iterator or stream buffering in between).
 * One connection per in-flight stream: the Agent has no connection cap.
 */

import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Agent, type Dispatcher } from "undici";
import type { RequestRecord, SweepConfig } from "../../schema/v1.ts";
import { completionsPath, type ResolvedTarget, redacted, secretsIn } from "../server/target.ts";
import { monotonicOriginMs } from "./clock.ts";
import { buildRequestBody, type RequestSpec } from "./request-body.ts";
import {
  classifyNetworkError,
  ErrorCode,
  noEventError,
  redirectMessage,
  STREAM_LIMITS,
  withBody,
} from "./request-errors.ts";
import { ResponseState } from "./response-state.ts";
import { REQUEST_ID_HEADER, socketWrites, watchSocketWrites } from "./socket-writes.ts";
import { SseParser } from "./sse.ts";
import { type ToolSettings, toolSettingsOf } from "./tool-calls.ts";

/** Errors that mean the connection was already closed when the request went out on it. */
const STALE_CONNECTION = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);
/** At most this many resends of one request, each only for a stale kept-alive connection. */
export const MAX_STALE_RETRIES = 3;

/** What a recorded configuration asks of every request (`clientOptionsOf`). */
export interface ClientOptions {
  timeoutS: number;
  ignoreEos: boolean;
  extraBody: Record<string, unknown>;
  /** `--reasoning-tags think`: reasoning comes inline in the content as `<think>…</think>`. */
  reasoningTags?: "think" | null;
  /** `--tools FILE`: the tool definitions (OpenAI chat shape) and `--tool-choice`. */
  tools?: ToolSettings | null;
  /** `--responses-chain`: a conversation's later turns name the previous response instead of re-sending it. */
  responsesChain?: boolean;
  /** `--endpoint-strategy`: how requests are spread over several servers (`target.endpoints`). */
  endpointStrategy?: EndpointStrategy;
}

export type EndpointStrategy = "round-robin" | "least-in-flight";

export function clientOptionsOf(cfg: SweepConfig): ClientOptions {
  return {
    timeoutS: cfg.timeout_s,
    ignoreEos: cfg.ignore_eos,
    extraBody: cfg.extra_body,
    reasoningTags: cfg.reasoning_tags ?? null,
    tools: toolSettingsOf(cfg),
    responsesChain: cfg.responses_chain === true,
    endpointStrategy: cfg.endpoints?.strategy ?? "round-robin",
  };
}

export interface ClientConfig extends ClientOptions {
  /** The server, its API and model (resolved), and the headers every request carries. */
  target: ResolvedTarget;
  /** Monotonic origin (performance.now()) that every recorded timestamp is relative to. */
  originMs: number;
  /** Byte caps on one response and one line (defaults: STREAM_LIMITS). */
  limits?: Partial<typeof STREAM_LIMITS>;
}

export type { RequestSpec } from "./request-body.ts";

export class StreamClient {
  readonly agent: Agent;
  /** Per server (`target.endpoints`): the headers every request to it carries. */
  private readonly headers: Record<string, string>[];
  /** Per server: this client's requests in flight to it (`--endpoint-strategy least-in-flight`). */
  private readonly inFlight: number[];
  /** A conversation's (agent session's) server: the one its first call went to. */
  private readonly sessionEndpoint = new Map<number, number>();
  /** The request's credentials, masked in every error message a record keeps. */
  private readonly secrets: string[];
  /** process.hrtime (system CLOCK_MONOTONIC) minus performance.now(), to align server timestamps. */
  readonly hrtimeOffsetMs: number;
  /** Distinguishes this client's request ids from another client's in the same process. */
  private readonly tag = randomBytes(4).toString("hex");
  /** False once the server was seen closing a kept-alive connection: every request then asks to close. */
  reuseConnections = true;
  /** Requests sent again because their kept-alive connection was already closed. */
  staleRetries = 0;

  constructor(readonly cfg: ClientConfig) {
    this.agent = new Agent({
      connections: null,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { timeout: 10_000 },
    });
    const endpoints = cfg.target.endpoints;
    this.headers = endpoints.map((e) => ({
      "content-type": "application/json",
      accept: "text/event-stream",
      ...e.headers,
    }));
    this.inFlight = endpoints.map(() => 0);
    this.secrets = [...new Set(endpoints.flatMap((e) => secretsIn(e.headers)))];
    this.hrtimeOffsetMs = monotonicOriginMs();
    watchSocketWrites();
  }

  /** Stream one request; always resolves with a record (errors are data, not exceptions). */
  stream(spec: RequestSpec): Promise<RequestRecord> {
    const body = spec.body ?? JSON.stringify(buildRequestBody(this.cfg, spec));
    const endpoint = this.route(spec);
    this.inFlight[endpoint]!++;
    return new Promise<RequestRecord>((resolve) =>
      this.attempt(spec, body, 0, endpoint, (rec) => {
        this.inFlight[endpoint]!--;
        if (this.inFlight.length > 1) rec.endpoint = endpoint;
        resolve(rec);
      }),
    );
  }

  /**
   * The server a request goes to: round-robin by its number (the same in every thread and runner:
   * ids are level-wide), or the one with the fewest of this client's streams in flight (ties: by
   * number). A conversation's later calls follow its first: its history is cached there.
   */
  private route(spec: RequestSpec): number {
    const n = this.inFlight.length;
    if (n === 1) return 0;
    const session = spec.session;
    const held = session === undefined ? undefined : this.sessionEndpoint.get(session);
    if (held !== undefined) return held;
    const start = (session ?? spec.id) % n;
    let e = start;
    if (this.cfg.endpointStrategy === "least-in-flight")
      for (let k = 1; k < n; k++) {
        const i = (start + k) % n;
        if (this.inFlight[i]! < this.inFlight[e]!) e = i;
      }
    if (session !== undefined) this.sessionEndpoint.set(session, e);
    return e;
  }

  /**
   * One send of a request. A request that went out on a kept-alive connection the server had
   * already closed (no response byte came back) is sent again on a fresh connection; from then
   * on this client stops reusing connections (`connection: close`), since such a server closes
   * after every response. Nothing else is retried.
   */
  private attempt(
    spec: RequestSpec,
    body: string,
    retries: number,
    endpoint: number,
    resolve: (r: RequestRecord) => void,
  ): void {
    const cfg = this.cfg;
    const server = cfg.target.endpoints[endpoint]!;
    const origin = cfg.originMs;
    let now = 0;
    let headersMs: number | null = null;
    let status: number | null = null;
    let error: { code: string; message: string } | null = null;
    let errBody = "";
    let sse = true;
    let timedOut = false;
    let finished = false;
    let controller: Dispatcher.DispatchController | null = null;
    let received = 0;
    const maxResponseBytes = cfg.limits?.maxResponseBytes ?? STREAM_LIMITS.maxResponseBytes;
    const maxLineBytes = cfg.limits?.maxLineBytes ?? STREAM_LIMITS.maxLineBytes;
    const secrets = this.secrets;
    const setError = (code: string, message: string) => {
      if (error === null) error = { code, message: redacted(message, secrets).slice(0, 1000) };
    };
    const state = new ResponseState({
      api: cfg.target.api,
      reasoningTags: cfg.reasoningTags ?? null,
      keepText: spec.keepText === true,
      serverOffsetMs: this.hrtimeOffsetMs + origin,
      setError,
    });
    let sseEvents = 0;
    const parser = new SseParser((ev) => {
      sseEvents++;
      state.event(ev, now - origin);
    });

    const dispatchAbs = performance.now();
    const wireId = `${this.tag}-${spec.id}${retries > 0 ? `-r${retries}` : ""}`;
    const timer = setTimeout(() => {
      timedOut = true;
      controller?.abort(new Error(`request exceeded --timeout-s ${cfg.timeoutS}`));
    }, cfg.timeoutS * 1000);

    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const endMs = performance.now() - origin;
      const written = socketWrites.get(wireId);
      socketWrites.delete(wireId);
      const sendAbs = written?.t ?? dispatchAbs;
      const eventTimes = state.eventTimes;
      const usage = state.usage;
      if (error === null && status !== null && status < 400 && sse) {
        const none = sseEvents === 0 ? noEventError(status, errBody) : null; // setError redacts
        if (none !== null) setError(none.code, none.message);
        else if (!state.done)
          setError(
            ErrorCode.missingDone,
            cfg.target.api === "responses"
              ? "stream ended without response.completed"
              : cfg.target.api === "messages"
                ? "stream ended without message_stop"
                : "stream ended without data: [DONE]",
          );
        else if (usage === null || usage.completion_tokens === null)
          setError(ErrorCode.missingUsage, "stream finished without usage.completion_tokens");
        else if (eventTimes.length === 0)
          setError(
            ErrorCode.emptyStream,
            `no content-bearing event: the server answered with no token (finish_reason ${state.finishReason ?? "none"}, ${usage.completion_tokens} completion tokens in its usage); a prompt that fills the context, a stop sequence or a filter that ends it at once?`,
          );
      }
      const rec: RequestRecord = {
        id: spec.id,
        level: spec.level,
        warmup: spec.warmup,
        intended_send_ms: spec.intendedSendAbsMs === null ? null : spec.intendedSendAbsMs - origin,
        send_ms: sendAbs - origin,
        dispatch_ms: dispatchAbs - origin,
        headers_ms: headersMs,
        first_token_ms: eventTimes.length > 0 ? eventTimes[0]! : null,
        last_token_ms: eventTimes.length > 0 ? eventTimes[eventTimes.length - 1]! : null,
        end_ms: endMs,
        event_times_ms: eventTimes,
        event_text_chars: state.eventChars,
        event_count: state.eventCount,
        prompt_tokens_requested: spec.promptTokensRequested,
        max_tokens: spec.maxTokens,
        usage,
        finish_reason: state.finishReason,
        http_status: status,
        error,
      };
      if (state.serverTimes !== undefined) rec.server_event_times_ms = state.serverTimes;
      if (state.serverArrival !== undefined) rec.server_arrival_ms = state.serverArrival;
      if (retries > 0) rec.retries = retries;
      if (spec.session !== undefined) rec.session = spec.session;
      if (spec.turn !== undefined) rec.turn = spec.turn;
      if (spec.jobCalls !== undefined) rec.job_calls = spec.jobCalls;
      if (spec.toolWaitMs !== undefined) rec.tool_wait_ms = spec.toolWaitMs;
      if (spec.promptReuse !== undefined) rec.prompt_reuse = spec.promptReuse;
      if (state.text !== null) spec.responseText = state.text.join("");
      if (state.text !== null && state.responseId !== null) spec.responseId = state.responseId;
      if (written?.connectedAt != null && written.connectedAt >= dispatchAbs)
        rec.connected_ms = written.connectedAt - origin;
      if (state.timings !== null) rec.server_timings = state.timings;
      if (state.usageRaw !== null) rec.usage_raw = state.usageRaw;
      state.finish(rec, cfg.ignoreEos);
      resolve(rec);
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
      },
      onResponseStart(_c, statusCode, headers) {
        // an interim answer (103 Early Hints, 100 Continue) comes before the real one
        if (statusCode < 200) return;
        now = performance.now();
        headersMs = now - origin;
        status = statusCode;
        if (statusCode >= 400) {
          sse = false;
          return;
        }
        if (statusCode >= 300) {
          sse = false;
          setError(
            ErrorCode.httpError,
            redirectMessage(statusCode, redacted(String(headers.location ?? ""), secrets)),
          );
          return;
        }
        const ct = String(headers["content-type"] ?? "");
        const enc = String(headers["content-encoding"] ?? "identity").toLowerCase();
        if (enc !== "identity") {
          sse = false;
          setError(
            ErrorCode.unsupportedEncoding,
            `the stream came with content-encoding "${enc.slice(0, 40)}" though none was asked for; turn compression off for the completions endpoint (a proxy?)`,
          );
        } else if (!ct.includes("text/event-stream")) {
          sse = false;
          setError(ErrorCode.notSse, `expected text/event-stream, got content-type "${ct}"`);
        }
      },
      onResponseData(c, chunk) {
        now = performance.now();
        received += chunk.length;
        if (received > maxResponseBytes) {
          setError(
            ErrorCode.responseTooLarge,
            `response passed ${maxResponseBytes} bytes without ending; cut there (an endless stream?)`,
          );
          c.abort(new Error("response_too_large"));
          return;
        }
        if (sse) {
          parser.push(chunk);
          const cut = spec.cancelAfterTokens;
          if (cut !== undefined && error === null && state.eventTimes.length >= cut) {
            setError(ErrorCode.cancelled, `cancelled by the client after ${cut} tokens (--cancel-share)`);
            c.abort(new Error("cancelled"));
            return;
          }
          if (parser.bufferedBytes > maxLineBytes) {
            setError(
              ErrorCode.lineTooLong,
              `one SSE line or event passed ${maxLineBytes} bytes without ending`,
            );
            c.abort(new Error("line_too_long"));
          }
        }
        // the body's first bytes, kept also for a stream: one that holds no event is named by them
        if (errBody.length < 2000) errBody += chunk.toString("utf8");
      },
      onResponseEnd() {
        now = performance.now();
        if (sse) parser.end();
        if (status !== null && status >= 400) {
          setError(ErrorCode.httpError, `HTTP ${status}: ${errBody.slice(0, 500)}`);
        } else if (!sse && error !== null && errBody) {
          // redacted once, as setError does: the message holds the body
          const e = withBody(error, status, errBody);
          error = { code: e.code, message: redacted(e.message, secrets).slice(0, 1000) };
        }
        finish();
      },
      onResponseError: (_c, err) => {
        now = performance.now();
        const code = (err as { code?: string }).code ?? "";
        const written = socketWrites.get(wireId);
        if (
          status === null &&
          !timedOut &&
          written?.reused === true &&
          STALE_CONNECTION.has(code) &&
          retries < MAX_STALE_RETRIES
        ) {
          finished = true;
          clearTimeout(timer);
          socketWrites.delete(wireId);
          this.staleRetries++;
          this.reuseConnections = false;
          this.attempt(spec, body, retries + 1, endpoint, resolve);
          return;
        }
        if (sse && status !== null) parser.end();
        const cls = classifyNetworkError(err as Error & { code?: string }, timedOut);
        // A network failure outranks what the parser inferred so far.
        error = error !== null && error.code !== ErrorCode.missingDone ? error : cls;
        if (timedOut) error = cls;
        finish();
      },
    };
    this.agent.dispatch(
      {
        origin: server.origin,
        path: server.basePath + completionsPath(cfg.target.api),
        method: "POST",
        headers: {
          ...this.headers[endpoint],
          [REQUEST_ID_HEADER]: wireId,
          ...(this.reuseConnections ? {} : { connection: "close" }),
        },
        body,
      },
      handler,
    );
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /** Abort everything in flight (used on SIGINT). */
  destroy(): Promise<void> {
    return this.agent.destroy();
  }
}
