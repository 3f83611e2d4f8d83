/** One completion request: its validation, its state in the engine, its non-streaming answer. */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, messagesMaxTokens, messagesPrompt, promptOf } from "./http.ts";
import type { FaultKind, MockOptions } from "./options.ts";
import { tokenize } from "./tokenizer.ts";

export type MockApi = "chat" | "completions" | "responses" | "messages";

export interface Req {
  /** The server's options (read-only). */
  o: MockOptions;
  /** Where the request's text starts in the vocabulary: its arrival order, or a greedy answer's key. */
  seq: number;
  id: string;
  res: ServerResponse;
  api: MockApi;
  chat: boolean;
  /** Of the `target` tokens, the first `reasoning` are reasoning (--reasoning-tokens). */
  reasoning: number;
  /** The tool this response calls (the request offered tools), or null: a text answer. */
  tool: string | null;
  /** Responses API: keep the conversation (prompt and answer) for a later previous_response_id. */
  store: boolean;
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
  /** Writes of stream text so far (the first may carry a BOM). */
  written: number;
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

/** The prompt and output length of a completion request, or a 400 naming what is wrong. */
export function validateCompletion(
  body: Record<string, unknown>,
  api: MockApi,
  o: MockOptions,
  stored: ReadonlyMap<string, string[]>,
): { promptTokens: string[]; maxTokens: number } {
  if (typeof body.model !== "string") throw new HttpError(400, "'model' is required");
  if (body.model !== o.model)
    throw new HttpError(400, `The model \`${body.model}\` does not exist.`, "NotFoundError");
  let promptTokens: string[];
  if (api === "responses") {
    const prev = body.previous_response_id;
    const before = typeof prev === "string" ? stored.get(prev) : [];
    if (before === undefined) throw new HttpError(400, `Previous response with id '${prev}' not found.`);
    promptTokens = [...before, ...inputOf(body)];
  } else if (api === "messages") {
    messagesMaxTokens(body);
    promptTokens = messagesPrompt(body);
  } else promptTokens = promptOf(body, api === "chat");
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
        : typeof body.max_output_tokens === "number"
          ? body.max_output_tokens
          : o.defaultMaxTokens;
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    throw new HttpError(400, "'max_tokens' must be an integer >= 1");
  return { promptTokens, maxTokens };
}

/** The Responses API's `input`: a string, or message items with string or `input_text` content. */
function inputOf(body: Record<string, unknown>): string[] {
  const input = body.input;
  if (typeof input === "string") return tokenize(input);
  if (!Array.isArray(input) || input.length === 0)
    throw new HttpError(400, "'input' must be a string or a non-empty array of items");
  const parts: string[] = [];
  for (const item of input) {
    const c = (item as { content?: unknown } | null)?.content;
    if (typeof c === "string") parts.push(c);
    else if (Array.isArray(c)) {
      for (const p of c)
        if (typeof (p as { text?: unknown })?.text === "string") parts.push((p as { text: string }).text);
    } else throw new HttpError(400, "each input item needs a 'content'");
  }
  return tokenize(parts.join("\n"));
}

/** The tool a request makes the answer call: none unless it offers tools and does not say "none". */
function toolOf(body: Record<string, unknown>): string | null {
  const tools = body.tools;
  if (!Array.isArray(tools) || tools.length === 0 || body.tool_choice === "none") return null;
  const choice = body.tool_choice as { name?: unknown; function?: { name?: unknown } } | string | undefined;
  if (choice !== null && typeof choice === "object") {
    const name = choice.function?.name ?? choice.name;
    if (typeof name === "string") return name;
  }
  const first = tools[0] as { name?: unknown; function?: { name?: unknown } };
  const name = first?.function?.name ?? first?.name;
  return typeof name === "string" ? name : "tool";
}

export function newReq(a: {
  seq: number;
  req: IncomingMessage;
  res: ServerResponse;
  body: Record<string, unknown>;
  api: MockApi;
  o: MockOptions;
  promptTokens: string[];
  maxTokens: number;
  target: number;
  fault: FaultKind | null;
  arrival: number;
  arrivalHr: number;
}): Req {
  const so = a.body.stream_options as { include_usage?: unknown } | undefined;
  const chat = a.api === "chat";
  const prefix = a.api === "responses" ? "resp" : a.api === "messages" ? "msg" : chat ? "chatcmpl" : "cmpl";
  return {
    o: a.o,
    seq: a.seq,
    id: `${prefix}-${randomBytes(8).toString("hex")}`,
    res: a.res,
    api: a.api,
    chat,
    reasoning: a.api === "completions" ? 0 : Math.min(a.o.reasoningTokens, a.target),
    tool: a.api === "completions" ? null : toolOf(a.body),
    store: a.api === "responses" && a.body.store !== false,
    stream: a.body.stream === true,
    // the Responses and Messages APIs always report usage
    includeUsage: so?.include_usage === true || a.api === "responses" || a.api === "messages",
    serverTs: a.o.serverTimestamps || a.req.headers["x-tokenbench-server-ts"] === "1",
    model: a.o.model,
    promptTokens: a.promptTokens,
    cachedTokens: 0,
    target: a.target,
    maxTokens: a.maxTokens,
    emitted: 0,
    fault: a.fault,
    tArrive: a.arrival,
    tArriveHr: a.arrivalHr,
    tAdmit: 0,
    tFirst: 0,
    tLast: 0,
    gen: 0,
    state: "queued",
    roleSent: false,
    written: 0,
    text: [],
    created: Math.floor(Date.now() / 1000),
  };
}

/** The non-streaming answer of a finished request. */
export function completionBody(r: Req, usage: Record<string, unknown>): unknown {
  const text = r.text.join("");
  const finish = r.target < r.maxTokens ? "stop" : "length";
  if (r.api === "messages")
    return {
      id: r.id,
      type: "message",
      role: "assistant",
      model: r.model,
      content: [{ type: "text", text }],
      stop_reason: r.tool !== null ? "tool_use" : finish === "length" ? "max_tokens" : "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: r.promptTokens.length - r.cachedTokens,
        cache_read_input_tokens: r.cachedTokens,
        output_tokens: usage.completion_tokens,
      },
    };
  if (r.api === "responses")
    return {
      id: r.id,
      object: "response",
      created_at: r.created,
      status: "completed",
      model: r.model,
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text }] }],
      usage: {
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
      },
    };
  const choice = r.chat
    ? { index: 0, message: { role: "assistant", content: text }, finish_reason: finish }
    : { index: 0, text, finish_reason: finish };
  return {
    id: r.id,
    object: r.chat ? "chat.completion" : "text_completion",
    created: r.created,
    model: r.model,
    choices: [choice],
    usage,
  };
}

const VOCAB =
  "the of and to in is was for on that with as it by at from his her an be this are or which".split(" ");

/** The i-th generated token of a request (its text is " " + this, one token by the mock's rule). */
export const vocabAt = (r: Req, i: number): string => VOCAB[(i + r.seq) % VOCAB.length]!;

/** Every token a request generated, in order. */
export function generatedTokens(r: Req): string[] {
  return Array.from({ length: r.emitted }, (_, i) => vocabAt(r, i));
}

/**
 * How long a request's answer is and where its text starts: max_tokens with ignore_eos, half of it
 * under the early_stop fault (ignore_eos ignored), else geometric with the configured mean. At
 * temperature 0 the answer (text and length) is a function of the prompt, as greedy decoding's is,
 * moved only by the server's --answer-variant; otherwise it follows the arrival order.
 */
export function outputPlan(
  body: Record<string, unknown>,
  fault: FaultKind | null,
  promptTokens: readonly string[],
  maxTokens: number,
  o: MockOptions,
  rand: () => number,
): { target: number; textKey: number | null } {
  const ignoreEos = body.ignore_eos === true && fault !== "early_stop";
  const textKey = body.temperature === 0 ? greedyKey(promptTokens, o.answerVariant) : null;
  if (fault === "early_stop") return { target: Math.max(1, Math.floor(maxTokens / 2)), textKey };
  if (ignoreEos) return { target: maxTokens, textKey };
  const p = 1 / Math.max(1, o.meanOutputTokens);
  const u = textKey === null ? rand() : (textKey % 10_007) / 10_007;
  return { target: Math.min(maxTokens, 1 + Math.floor(Math.log(1 - u) / Math.log(1 - p))), textKey };
}

/** A greedy answer's key: FNV-1a of the prompt's tokens, moved by the server's answer variant. */
function greedyKey(promptTokens: readonly string[], variant: number): number {
  let h = 0x811c9dc5;
  for (const t of promptTokens)
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193) >>> 0;
  return (h + Math.imul(variant, 7919)) >>> 0;
}
