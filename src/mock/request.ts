/** One completion request: its validation, its state in the engine, its non-streaming answer. */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, promptOf } from "./http.ts";
import type { FaultKind, MockOptions } from "./options.ts";

export interface Req {
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

/** The prompt and output length of a completion request, or a 400 naming what is wrong. */
export function validateCompletion(
  body: Record<string, unknown>,
  chat: boolean,
  o: MockOptions,
): { promptTokens: string[]; maxTokens: number } {
  if (typeof body.model !== "string") throw new HttpError(400, "'model' is required");
  if (body.model !== o.model)
    throw new HttpError(400, `The model \`${body.model}\` does not exist.`, "NotFoundError");
  const promptTokens = promptOf(body, chat);
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
  return { promptTokens, maxTokens };
}

export function newReq(a: {
  seq: number;
  req: IncomingMessage;
  res: ServerResponse;
  body: Record<string, unknown>;
  chat: boolean;
  o: MockOptions;
  promptTokens: string[];
  maxTokens: number;
  target: number;
  fault: FaultKind | null;
  arrival: number;
  arrivalHr: number;
}): Req {
  const so = a.body.stream_options as { include_usage?: unknown } | undefined;
  return {
    seq: a.seq,
    id: `${a.chat ? "chatcmpl" : "cmpl"}-${randomBytes(8).toString("hex")}`,
    res: a.res,
    chat: a.chat,
    stream: a.body.stream === true,
    includeUsage: so?.include_usage === true,
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
    text: [],
    created: Math.floor(Date.now() / 1000),
  };
}

/** The non-streaming answer of a finished request. */
export function completionBody(r: Req, usage: unknown): unknown {
  const text = r.text.join("");
  const finish = r.target < r.maxTokens ? "stop" : "length";
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
