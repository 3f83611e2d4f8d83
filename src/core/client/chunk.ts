/**
 * Interpretation of one OpenAI-compatible stream chunk (already JSON-parsed). Pure; no I/O.
 * Content-bearing means non-empty `delta.content`, `delta.reasoning_content`, `delta.reasoning`
 * (chat) or `text` (completions). Role-only, empty and usage-only chunks carry 0 characters and
 * so can never be taken for the first token.
 */
export interface ChunkInfo {
  contentChars: number;
  /** The answer's text in this chunk (`delta.content` or `text`; reasoning is not part of it). */
  text: string;
  finishReason: string | null;
  usage: {
    prompt: number | null;
    completion: number | null;
    cached: number | null;
    /** Why a count that was sent is not a non-negative integer (it is then null), or null. */
    invalid: string | null;
  } | null;
  errorMessage: string | null;
  serverTsMs: number | null;
  serverArrivalTsMs: number | null;
  /** The server's own timing object (llama.cpp `timings`), as sent. */
  timings: Record<string, unknown> | null;
  /** The usage object as sent, when it has more than prompt/completion/total counts. */
  usageRaw: Record<string, unknown> | null;
}

function strLen(v: unknown): number {
  return typeof v === "string" ? v.length : 0;
}

/** A token count as sent: absent (null), or a non-negative integer; anything else is a protocol violation. */
function count(v: unknown, name: string, bad: string[]): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "number" && Number.isInteger(v) && v >= 0) return v;
  bad.push(`usage.${name} is ${JSON.stringify(v)?.slice(0, 40)}, not a non-negative integer`);
  return null;
}

export function interpretChunk(obj: unknown): ChunkInfo {
  const info: ChunkInfo = {
    contentChars: 0,
    text: "",
    finishReason: null,
    usage: null,
    errorMessage: null,
    serverTsMs: null,
    serverArrivalTsMs: null,
    timings: null,
    usageRaw: null,
  };
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    info.errorMessage = "chunk is not a JSON object";
    return info;
  }
  const o = obj as Record<string, unknown>;
  if (o.error !== undefined && o.error !== null) {
    const e = o.error as Record<string, unknown> | string;
    info.errorMessage =
      typeof e === "string" ? e : typeof e.message === "string" ? e.message : JSON.stringify(e).slice(0, 500);
  }
  const choices = o.choices;
  if (Array.isArray(choices)) {
    for (const c of choices) {
      if (c === null || typeof c !== "object") continue;
      const ch = c as Record<string, unknown>;
      const delta = ch.delta as Record<string, unknown> | undefined;
      if (delta !== undefined && delta !== null && typeof delta === "object") {
        info.contentChars +=
          strLen(delta.content) + strLen(delta.reasoning_content) + strLen(delta.reasoning);
        if (typeof delta.content === "string") info.text += delta.content;
      }
      info.contentChars += strLen(ch.text);
      if (typeof ch.text === "string") info.text += ch.text;
      if (typeof ch.finish_reason === "string") info.finishReason = ch.finish_reason;
    }
  }
  const u = o.usage;
  if (u !== null && typeof u === "object") {
    const us = u as Record<string, unknown>;
    const details = us.prompt_tokens_details as Record<string, unknown> | null | undefined;
    const bad: string[] = [];
    info.usage = {
      prompt: count(us.prompt_tokens, "prompt_tokens", bad),
      completion: count(us.completion_tokens, "completion_tokens", bad),
      cached:
        details && typeof details === "object"
          ? count(details.cached_tokens, "prompt_tokens_details.cached_tokens", bad)
          : null,
      invalid: bad.length > 0 ? bad.join("; ") : null,
    };
    if (
      Object.keys(us).some((k) => k !== "prompt_tokens" && k !== "completion_tokens" && k !== "total_tokens")
    )
      info.usageRaw = us;
  }
  if (o.timings !== null && typeof o.timings === "object" && !Array.isArray(o.timings))
    info.timings = o.timings as Record<string, unknown>;
  if (typeof o.tokenbench_server_ts_ms === "number") info.serverTsMs = o.tokenbench_server_ts_ms;
  if (typeof o.tokenbench_server_arrival_ts_ms === "number")
    info.serverArrivalTsMs = o.tokenbench_server_arrival_ts_ms;
  return info;
}
