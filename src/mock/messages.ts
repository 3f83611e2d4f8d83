/**
 * The Messages API (Anthropic's shape, which vLLM, SGLang and llama.cpp serve at /v1/messages):
 * its request (a `system` apart from `messages`, `max_tokens` required), its stream (message_start
 * with the input counts, content blocks for thinking, text and tool_use, message_delta with the
 * output count and the stop reason, message_stop) and its error event. Its request is read in
 * http.ts, its non-streaming answer written in request.ts.
 */
import { argumentsOf, type Piece, serverStamp } from "./chunks.ts";
import type { MockOptions } from "./options.ts";
import type { Req } from "./request.ts";

const event = (type: string, body: string): string => `event: ${type}\ndata: {"type":"${type}",${body}}\n\n`;

/** The usage the Messages API reports: the uncached input, the cache's reads, the output. */
function usageOf(r: Req, output: number): string {
  return `{"input_tokens":${r.promptTokens.length - r.cachedTokens},"cache_read_input_tokens":${r.cachedTokens},"output_tokens":${output}}`;
}

export function messagesStart(r: Req): string {
  return event(
    "message_start",
    `"message":{"id":"${r.id}","type":"message","role":"assistant","content":[],"model":${JSON.stringify(r.model)},"stop_reason":null,"stop_sequence":null,"usage":${usageOf(r, 0)}}`,
  );
}

/** One piece as Messages events: a block opened where its kind starts (the thinking block closed), then its delta. */
export function messagesDelta(r: Req, o: MockOptions, p: Piece, ts: number | null): string {
  const stamp = ts !== null ? serverStamp(r, p, ts, o) : "";
  let out = "";
  if (p.reasoning !== "") {
    if (p.from === 0)
      out += event("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":""}`);
    out += event(
      "content_block_delta",
      `"index":0,"delta":{"type":"thinking_delta","thinking":${JSON.stringify(p.reasoning)}}${stamp}`,
    );
  }
  if (p.answer !== "") {
    const index = r.reasoning > 0 ? 1 : 0;
    if (p.from <= r.reasoning) {
      if (index === 1) out += event("content_block_stop", `"index":0`);
      const block =
        r.tool !== null
          ? `{"type":"tool_use","id":"toolu_${r.id.slice(-8)}","name":${JSON.stringify(r.tool)},"input":{}}`
          : `{"type":"text","text":""}`;
      out += event("content_block_start", `"index":${index},"content_block":${block}`);
    }
    const delta =
      r.tool !== null
        ? `{"type":"input_json_delta","partial_json":${JSON.stringify(argumentsOf(r, p))}}`
        : `{"type":"text_delta","text":${JSON.stringify(p.answer)}}`;
    out += event("content_block_delta", `"index":${index},"delta":${delta}${stamp}`);
  }
  return out;
}

const stopReason = (r: Req): string =>
  r.tool !== null ? "tool_use" : r.target >= r.maxTokens ? "max_tokens" : "end_turn";

/** The last piece, the open block closed, then the stop reason with the output count, and the end. */
export function messagesLast(
  r: Req,
  o: MockOptions,
  p: Piece,
  ts: number | null,
  usage: boolean,
  end: boolean,
): string {
  const blocks = r.reasoning > 0 && r.emitted > r.reasoning ? 1 : 0;
  const counts = usage ? `,"usage":{"output_tokens":${r.emitted}}` : "";
  return (
    messagesDelta(r, o, p, ts) +
    event("content_block_stop", `"index":${blocks}`) +
    event("message_delta", `"delta":{"stop_reason":"${stopReason(r)}","stop_sequence":null}${counts}`) +
    (end ? 'event: message_stop\ndata: {"type":"message_stop"}\n\n' : "")
  );
}

/** The Messages API's error event (an overloaded server, as one under load says it mid-stream). */
export const messagesError = (): string =>
  event("error", `"error":{"type":"overloaded_error","message":"injected fault: Overloaded"}`);
