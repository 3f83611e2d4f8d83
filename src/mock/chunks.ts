/**
 * The SSE text of a stream's events, built as strings (no per-token JSON.stringify of objects):
 * chat and completions chunks, the Responses API's typed events, reasoning (either field name or
 * inline `<think>` tags), tool-call deltas, and the protocol variants the SSE standard allows.
 */
import type { MockOptions } from "./options.ts";
import { type Req, vocabAt } from "./request.ts";

/** The tokens of one event: the reasoning and the answer part (either may be empty). */
export interface Piece {
  reasoning: string;
  answer: string;
  /** Token indexes [from, to) of the request's output this event carries. */
  from: number;
  to: number;
}

/** The next `k` tokens of a request (before they are counted as emitted). */
export function pieceOf(r: Req, k: number): Piece {
  let reasoning = "";
  let answer = "";
  const from = r.emitted;
  for (let i = from; i < from + k; i++) {
    const t = ` ${vocabAt(r, i)}`;
    if (i < r.reasoning) reasoning += t;
    else answer += t;
  }
  return { reasoning, answer, from, to: from + k };
}

export const pieceText = (p: Piece): string => p.reasoning + p.answer;

export function chunkPrefix(r: Req): string {
  return `{"id":"${r.id}","object":"${r.chat ? "chat.completion.chunk" : "text_completion"}","created":${r.created},"model":${JSON.stringify(r.model)},"choices":`;
}

export function roleChunk(r: Req): string {
  if (!r.chat) return "";
  return `data: ${chunkPrefix(r)}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`;
}

/** A tool call's arguments: the answer's tokens as one JSON string value, opened and closed. */
export function argumentsOf(r: Req, p: Piece): string {
  let a = p.answer;
  if (p.from <= r.reasoning && p.to > r.reasoning) a = `{"q":"${a}`;
  if (p.to === r.target && a !== "") a += '"}';
  return a;
}

/** The chat delta of a piece, as JSON. */
function chatDelta(r: Req, o: MockOptions, p: Piece): string {
  const parts: string[] = [];
  let content = p.answer;
  if (p.reasoning !== "") {
    if (o.reasoningField === "think") {
      const open = p.from === 0 ? "<think>" : "";
      const close = p.to >= r.reasoning ? "</think>\n\n" : "";
      content = `${open}${p.reasoning}${close}${r.tool === null ? content : ""}`;
    } else parts.push(`${JSON.stringify(o.reasoningField)}:${JSON.stringify(p.reasoning)}`);
  }
  if (r.tool !== null && p.answer !== "") {
    const first = p.from <= r.reasoning;
    const head = first ? `"id":"call_${r.id.slice(-8)}","type":"function",` : "";
    const fn = first ? `"name":${JSON.stringify(r.tool)},` : "";
    parts.push(
      `"tool_calls":[{"index":0,${head}"function":{${fn}"arguments":${JSON.stringify(argumentsOf(r, p))}}}]`,
    );
    if (o.reasoningField === "think" && p.reasoning !== "")
      parts.unshift(`"content":${JSON.stringify(content)}`);
  } else if (content !== "" || parts.length === 0) parts.unshift(`"content":${JSON.stringify(content)}`);
  return `{${parts.join(",")}}`;
}

/** A chat or completions content event; with server timestamps, the send time (and on the first, the arrival). */
export function contentChunk(
  r: Req,
  o: MockOptions,
  p: Piece,
  finish: string | null,
  usage: string | null,
  ts: number | null,
): string {
  const fin = finish === null ? "null" : `"${finish}"`;
  const choice = r.chat
    ? `{"index":0,"delta":${chatDelta(r, o, p)},"logprobs":null,"finish_reason":${fin}}`
    : `{"index":0,"text":${JSON.stringify(pieceText(p))},"logprobs":null,"finish_reason":${fin}}`;
  const second = r.fault === "two_choices" ? `,${choice.replace('{"index":0', '{"index":1')}` : "";
  let s = `data: ${chunkPrefix(r)}[${choice}${second}]`;
  if (usage !== null) s += `,"usage":${usage}`;
  if (ts !== null) s += serverStamp(r, p, ts, o);
  return `${s}}\n\n`;
}

export function serverStamp(r: Req, p: Piece, ts: number, o: MockOptions): string {
  let s = `,"tokenbench_server_ts_ms":${ts}`;
  if (p.to <= o.tokensPerChunk) s += `,"tokenbench_server_arrival_ts_ms":${r.tArriveHr}`;
  return s;
}

export function usageJson(r: Req, omitDetails: boolean, o: MockOptions): string {
  const completion = r.fault === "huge_usage" ? 1e15 : r.emitted;
  const u: Record<string, unknown> = {
    prompt_tokens: r.promptTokens.length,
    total_tokens: r.promptTokens.length + completion,
    completion_tokens: completion,
  };
  if (!omitDetails) u.prompt_tokens_details = { cached_tokens: r.cachedTokens };
  if (o.reasoningUsage && r.reasoning > 0)
    u.completion_tokens_details = { reasoning_tokens: Math.min(r.reasoning, r.emitted) };
  return JSON.stringify(u);
}

// ---- the Responses API ----

const typed = (type: string, body: string): string => `event: ${type}\ndata: {"type":"${type}",${body}}\n\n`;

/** The events before the first token: the response created and in progress. */
export function responsesStart(r: Req): string {
  const resp = `"response":{"id":"${r.id}","object":"response","created_at":${r.created},"status":"in_progress","model":${JSON.stringify(r.model)}}`;
  return typed("response.created", resp) + typed("response.in_progress", resp);
}

/** One piece as Responses events: an item opened where its kind starts, then its delta. */
export function responsesDelta(r: Req, o: MockOptions, p: Piece, ts: number | null): string {
  const stamp = ts !== null ? serverStamp(r, p, ts, o) : "";
  let out = "";
  if (p.reasoning !== "") {
    if (p.from === 0)
      out += typed(
        "response.output_item.added",
        `"output_index":0,"item":{"id":"rs_${r.id}","type":"reasoning"}`,
      );
    out += typed(
      "response.reasoning_text.delta",
      `"item_id":"rs_${r.id}","output_index":0,"content_index":0,"delta":${JSON.stringify(p.reasoning)}${stamp}`,
    );
  }
  if (p.answer !== "") {
    const index = r.reasoning > 0 ? 1 : 0;
    if (p.from <= r.reasoning) {
      const item =
        r.tool !== null
          ? `{"id":"fc_${r.id}","type":"function_call","call_id":"call_${r.id.slice(-8)}","name":${JSON.stringify(r.tool)},"arguments":""}`
          : `{"id":"msg_${r.id}","type":"message","role":"assistant","content":[]}`;
      out += typed("response.output_item.added", `"output_index":${index},"item":${item}`);
    }
    const s = stamp;
    out +=
      r.tool !== null
        ? typed(
            "response.function_call_arguments.delta",
            `"item_id":"fc_${r.id}","output_index":${index},"delta":${JSON.stringify(argumentsOf(r, p))}${s}`,
          )
        : typed(
            "response.output_text.delta",
            `"item_id":"msg_${r.id}","output_index":${index},"content_index":0,"delta":${JSON.stringify(p.answer)}${s}`,
          );
  }
  return out;
}

/** The last piece, then `response.completed` (or `response.incomplete` at max_output_tokens) with the usage. */
export function responsesLast(r: Req, o: MockOptions, p: Piece, usage: string, ts: number | null): string {
  const u = JSON.parse(usage) as Record<string, number | Record<string, number>>;
  const ru = {
    input_tokens: u.prompt_tokens,
    output_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
    input_tokens_details: u.prompt_tokens_details ?? { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: Math.min(r.reasoning, r.emitted) },
  };
  const incomplete = r.target >= r.maxTokens;
  const status = incomplete
    ? `"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}`
    : `"status":"completed"`;
  const type = incomplete ? "response.incomplete" : "response.completed";
  return (
    responsesDelta(r, o, p, ts) +
    typed(type, `"response":{"id":"${r.id}","object":"response",${status},"usage":${JSON.stringify(ru)}}`)
  );
}

// ---- the wire ----

/**
 * The protocol variants applied to a piece of stream text: line ends, a BOM on the first write,
 * `data:` without its space, each event's JSON over two `data` lines, comments, id/retry fields.
 */
export function wire(o: MockOptions, first: boolean, text: string): string {
  const v = o.protocol;
  if (v.length === 0) return text;
  let s = text;
  if (v.includes("ids")) s = s.replace(/^data: /gm, "id: 7\nretry: 3000\ndata: ");
  if (v.includes("multiline")) s = s.replace(/^data: \{"/gm, 'data: {\ndata: "');
  if (v.includes("comments")) s = s.replace(/^data: /gm, ": keep-alive\ndata: ");
  if (v.includes("no-space")) s = s.replace(/^data: /gm, "data:");
  if (v.includes("crlf")) s = s.replace(/\n/g, "\r\n");
  else if (v.includes("cr")) s = s.replace(/\n/g, "\r");
  if (first && v.includes("bom")) s = `\uFEFF${s}`;
  return s;
}

/** After [DONE]: one more content event (variant after-done), which no client should count. */
export function afterDone(r: Req, o: MockOptions): string {
  return contentChunk(
    r,
    o,
    { reasoning: "", answer: " late", from: r.target, to: r.target },
    null,
    null,
    null,
  );
}

export const errorEvent = (): string =>
  'event: error\ndata: {"error":{"message":"injected fault: the model crashed mid-stream","type":"internal_error"}}\n\n';
