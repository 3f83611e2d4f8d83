/** The SSE text of a stream's events, built as strings (no per-token JSON.stringify of objects). */
import type { Req } from "./request.ts";

export function chunkPrefix(r: Req): string {
  return `{"id":"${r.id}","object":"${r.chat ? "chat.completion.chunk" : "text_completion"}","created":${r.created},"model":${JSON.stringify(r.model)},"choices":`;
}

export function roleChunk(r: Req): string {
  if (!r.chat) return "";
  return `data: ${chunkPrefix(r)}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`;
}

/** A content event; with server timestamps, the send time (and on the first, the arrival). */
export function contentChunk(
  r: Req,
  text: string,
  finish: string | null,
  usage: string | null,
  ts: number | null,
  tokensPerChunk: number,
): string {
  const fin = finish === null ? "null" : `"${finish}"`;
  const choice = r.chat
    ? `{"index":0,"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":${fin}}`
    : `{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${fin}}`;
  let s = `data: ${chunkPrefix(r)}[${choice}]`;
  if (usage !== null) s += `,"usage":${usage}`;
  if (ts !== null) {
    s += `,"tokenbench_server_ts_ms":${ts}`;
    if (r.emitted <= tokensPerChunk) s += `,"tokenbench_server_arrival_ts_ms":${r.tArriveHr}`;
  }
  return `${s}}\n\n`;
}

export function usageJson(r: Req, omitDetails: boolean): string {
  const u: Record<string, unknown> = {
    prompt_tokens: r.promptTokens.length,
    total_tokens: r.promptTokens.length + r.emitted,
    completion_tokens: r.emitted,
  };
  if (!omitDetails) u.prompt_tokens_details = { cached_tokens: r.cachedTokens };
  return JSON.stringify(u);
}
