/**
 * Interpretation of one OpenAI-compatible stream event (already JSON-parsed). Pure; no I/O.
 * A chunk's characters are counted by kind: the answer (`delta.content`, completions' `text`,
 * Responses' `response.output_text.delta`), reasoning (`delta.reasoning_content` as vLLM, SGLang
 * and DeepSeek send it, `delta.reasoning` as newer vLLM and OpenRouter do, Responses'
 * `response.reasoning_text.delta` and `response.reasoning_summary_text.delta`) and tool calls
 * (`delta.tool_calls[].function` name and arguments, Responses'
 * `response.function_call_arguments.delta`; a Responses function-call item counts the call) and
 * the Messages API's content blocks (`text_delta`, `thinking_delta`, `input_json_delta` of a
 * `tool_use` block, which counts the call). Role-only, empty and usage-only chunks carry 0
 * characters and so can never be taken for the first token.
 */
export interface ChunkUsage {
  prompt: number | null;
  completion: number | null;
  cached: number | null;
  /** `completion_tokens_details.reasoning_tokens` (Responses: `output_tokens_details`), when sent. */
  reasoning: number | null;
  /** Why a count that was sent is not a non-negative integer (it is then null), or null. */
  invalid: string | null;
}

export interface ChunkInfo {
  /** Characters of answer text (content). */
  answerChars: number;
  reasoningChars: number;
  /** Characters of tool-call names and arguments. */
  toolChars: number;
  /**
   * New tool calls this chunk starts that have no index of their own (Responses items, index-less
   * deltas with an id), counted.
   */
  toolCalls: number;
  /** Always true when set: `toolCalls` counts new calls; indexed calls are in `toolIndexes`. */
  toolCallsAreNew: boolean;
  /** The `index`es of this chunk's tool-call deltas (a call keeps its index over its deltas). */
  toolIndexes: number[];
  /** The answer's text in this chunk (reasoning is not part of it). */
  text: string;
  finishReason: string | null;
  /** The highest choice index seen: above 0, the server sent several choices (`n > 1`). */
  maxChoiceIndex: number;
  usage: ChunkUsage | null;
  errorMessage: string | null;
  /** The error's own type where the API names one (Messages: `overloaded_error`, ...), or null. */
  errorType: string | null;
  /** Responses API: the response's id (`response.created`). */
  responseId: string | null;
  /** Responses API: the terminal event (`response.completed` / `response.incomplete`) came. */
  terminal: boolean;
  serverTsMs: number | null;
  serverArrivalTsMs: number | null;
  /** The server's own timing object (llama.cpp `timings`), as sent. */
  timings: Record<string, unknown> | null;
  /** The usage object as sent, when it has more than prompt/completion/total counts. */
  usageRaw: Record<string, unknown> | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const strLen = (v: unknown): number => (typeof v === "string" ? v.length : 0);

/** A token count as sent: absent (null), or a non-negative integer; anything else is a protocol violation. */
function count(v: unknown, name: string, bad: string[]): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "number" && Number.isInteger(v) && v >= 0) return v;
  bad.push(`usage.${name} is ${JSON.stringify(v)?.slice(0, 40)}, not a non-negative integer`);
  return null;
}

export function emptyInfo(): ChunkInfo {
  return resetInfo({} as ChunkInfo);
}

/** Every field back to "nothing seen": one object serves every event of a stream (no garbage per chunk). */
function resetInfo(info: ChunkInfo): ChunkInfo {
  info.answerChars = 0;
  info.reasoningChars = 0;
  info.toolChars = 0;
  info.toolCalls = 0;
  info.toolCallsAreNew = false;
  if (info.toolIndexes) info.toolIndexes.length = 0;
  else info.toolIndexes = [];
  info.text = "";
  info.finishReason = null;
  info.maxChoiceIndex = 0;
  info.usage = null;
  info.errorMessage = null;
  info.errorType = null;
  info.responseId = null;
  info.terminal = false;
  info.serverTsMs = null;
  info.serverArrivalTsMs = null;
  info.timings = null;
  info.usageRaw = null;
  return info;
}

function errorText(e: unknown): string {
  if (typeof e === "string") return e;
  if (isObj(e) && typeof e.message === "string") return e.message;
  return JSON.stringify(e)?.slice(0, 500) ?? String(e);
}

/** Usage counts under either API's names (chat: prompt/completion, Responses: input/output). */
function readUsage(info: ChunkInfo, us: Obj, responses: boolean): void {
  const [p, c, pd, cd] = responses
    ? ["input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"]
    : ["prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"];
  const bad: string[] = [];
  const pDetails = us[pd];
  const cDetails = us[cd];
  info.usage = {
    prompt: count(us[p], p, bad),
    completion: count(us[c], c, bad),
    cached: isObj(pDetails) ? count(pDetails.cached_tokens, `${pd}.cached_tokens`, bad) : null,
    reasoning: isObj(cDetails) ? count(cDetails.reasoning_tokens, `${cd}.reasoning_tokens`, bad) : null,
    invalid: bad.length > 0 ? bad.join("; ") : null,
  };
  if (Object.keys(us).some((k) => k !== p && k !== c && k !== "total_tokens")) info.usageRaw = us;
}

function readCommon(info: ChunkInfo, o: Obj): void {
  if (isObj(o.timings)) info.timings = o.timings;
  if (typeof o.tokenbench_server_ts_ms === "number") info.serverTsMs = o.tokenbench_server_ts_ms;
  if (typeof o.tokenbench_server_arrival_ts_ms === "number")
    info.serverArrivalTsMs = o.tokenbench_server_arrival_ts_ms;
}

/** One chunk of a chat or completions stream (into `into`, reset first, when given). */
export function interpretChunk(obj: unknown, into?: ChunkInfo): ChunkInfo {
  const info = into ? resetInfo(into) : emptyInfo();
  if (!isObj(obj)) {
    info.errorMessage = "chunk is not a JSON object";
    return info;
  }
  if (obj.error !== undefined && obj.error !== null) info.errorMessage = errorText(obj.error);
  const choices = obj.choices;
  if (Array.isArray(choices)) {
    for (const ch of choices) {
      if (!isObj(ch)) continue;
      if (typeof ch.index === "number" && ch.index > info.maxChoiceIndex) info.maxChoiceIndex = ch.index;
      const delta = ch.delta;
      if (isObj(delta)) {
        const content = delta.content;
        if (typeof content === "string" && content.length > 0) {
          info.answerChars += content.length;
          info.text += content;
        }
        info.reasoningChars += strLen(delta.reasoning_content) + strLen(delta.reasoning);
        const calls = delta.tool_calls;
        if (Array.isArray(calls)) {
          for (const call of calls) {
            if (!isObj(call)) continue;
            const fn = call.function;
            // An index says which call a delta continues: calls are counted by the indexes used,
            // so one that jumps (0, then 5) or is huge counts once, not index + 1 times.
            if (typeof call.index === "number" && Number.isFinite(call.index)) {
              if (!info.toolIndexes.includes(call.index)) info.toolIndexes.push(call.index);
            } else if (typeof call.id === "string" && call.id !== "") {
              info.toolCalls++;
              info.toolCallsAreNew = true;
            }
            if (isObj(fn)) info.toolChars += strLen(fn.name) + strLen(fn.arguments);
          }
        }
      }
      if (typeof ch.text === "string" && ch.text.length > 0) {
        info.answerChars += ch.text.length;
        info.text += ch.text;
      }
      if (typeof ch.finish_reason === "string") info.finishReason = ch.finish_reason;
    }
  }
  if (isObj(obj.usage)) readUsage(info, obj.usage, false);
  readCommon(info, obj);
  return info;
}

/** One typed event of a Responses API stream (`type` names it; the SSE `event:` repeats it). */
export function interpretResponsesEvent(obj: unknown, into?: ChunkInfo): ChunkInfo {
  const info = into ? resetInfo(into) : emptyInfo();
  if (!isObj(obj)) {
    info.errorMessage = "event is not a JSON object";
    return info;
  }
  const type = obj.type;
  switch (type) {
    case "response.output_text.delta":
      if (typeof obj.delta === "string") {
        info.answerChars = obj.delta.length;
        info.text = obj.delta;
      }
      break;
    case "response.reasoning_text.delta":
    case "response.reasoning_summary_text.delta":
      info.reasoningChars = strLen(obj.delta);
      break;
    case "response.function_call_arguments.delta":
      info.toolChars = strLen(obj.delta);
      break;
    case "response.output_item.added": {
      const item = obj.item;
      // the call is counted here; its first token is its first arguments delta (the item's
      // name comes with the item, not as a token of its own)
      if (isObj(item) && item.type === "function_call") {
        info.toolCalls = 1;
        info.toolCallsAreNew = true;
        info.toolChars = strLen(item.arguments);
      }
      break;
    }
    case "response.created": {
      const r = obj.response;
      if (isObj(r) && typeof r.id === "string") info.responseId = r.id;
      break;
    }
    case "response.completed":
    case "response.incomplete": {
      info.terminal = true;
      const r = obj.response;
      if (isObj(r)) {
        if (typeof r.id === "string") info.responseId = r.id;
        if (isObj(r.usage)) readUsage(info, r.usage, true);
        const why = isObj(r.incomplete_details) ? r.incomplete_details.reason : null;
        info.finishReason =
          type === "response.completed" ? "stop" : why === "max_output_tokens" ? "length" : String(why);
      }
      break;
    }
    case "response.failed": {
      const r = obj.response;
      info.errorMessage = isObj(r) && r.error != null ? errorText(r.error) : "response.failed";
      break;
    }
    case "error":
      info.errorMessage = typeof obj.message === "string" ? obj.message : errorText(obj.error ?? obj);
      break;
    default:
      // other typed events (output_item.done, content_part.added, ...) carry nothing measured
      if (obj.error !== undefined && obj.error !== null) info.errorMessage = errorText(obj.error);
  }
  readCommon(info, obj);
  return info;
}

/**
 * The Messages API's stop reasons in the vocabulary every record uses: `end_turn` and
 * `stop_sequence` are "stop", `max_tokens` is "length", `tool_use` is "tool_calls"; others
 * (`pause_turn`, `refusal`) as sent.
 */
const STOP_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
};

/**
 * Messages usage: `input_tokens` is the uncached part of the prompt, so the prompt is it plus the
 * cache's reads and writes, and the cached share is the reads. `message_start` carries the input
 * counts and `message_delta` the output count (some servers repeat the input there): a count not
 * sent is null here and the response keeps the one it had.
 */
function readMessagesUsage(info: ChunkInfo, us: Obj): void {
  const bad: string[] = [];
  const input = count(us.input_tokens, "input_tokens", bad);
  const read = count(us.cache_read_input_tokens, "cache_read_input_tokens", bad);
  const created = count(us.cache_creation_input_tokens, "cache_creation_input_tokens", bad);
  info.usage = {
    prompt: input === null ? null : input + (read ?? 0) + (created ?? 0),
    completion: count(us.output_tokens, "output_tokens", bad),
    cached: input === null ? null : (read ?? 0),
    reasoning: null,
    invalid: bad.length > 0 ? bad.join("; ") : null,
  };
  if (Object.keys(us).some((k) => k !== "input_tokens" && k !== "output_tokens")) info.usageRaw = us;
}

/** One event of a Messages API stream (`type` names it; the SSE `event:` repeats it). */
export function interpretMessagesEvent(obj: unknown, into?: ChunkInfo): ChunkInfo {
  const info = into ? resetInfo(into) : emptyInfo();
  if (!isObj(obj)) {
    info.errorMessage = "event is not a JSON object";
    return info;
  }
  switch (obj.type) {
    case "message_start": {
      const m = obj.message;
      if (isObj(m)) {
        if (typeof m.id === "string") info.responseId = m.id;
        if (isObj(m.usage)) readMessagesUsage(info, m.usage);
      }
      break;
    }
    case "content_block_start": {
      const b = obj.content_block;
      if (!isObj(b)) break;
      // a tool_use block is the call (its name comes with the block, not as a token of its own);
      // text or thinking a block opens with is output like a delta's
      if (b.type === "tool_use") {
        info.toolCalls = 1;
        info.toolCallsAreNew = true;
      } else if (b.type === "text" && typeof b.text === "string" && b.text !== "") {
        info.answerChars = b.text.length;
        info.text = b.text;
      } else if (b.type === "thinking") info.reasoningChars = strLen(b.thinking);
      break;
    }
    case "content_block_delta": {
      const d = obj.delta;
      if (!isObj(d)) break;
      if (d.type === "text_delta" && typeof d.text === "string") {
        info.answerChars = d.text.length;
        info.text = d.text;
      } else if (d.type === "thinking_delta") info.reasoningChars = strLen(d.thinking);
      else if (d.type === "input_json_delta") info.toolChars = strLen(d.partial_json);
      break;
    }
    case "message_delta": {
      const d = obj.delta;
      if (isObj(d) && typeof d.stop_reason === "string")
        info.finishReason = STOP_REASONS[d.stop_reason] ?? d.stop_reason;
      if (isObj(obj.usage)) readMessagesUsage(info, obj.usage);
      break;
    }
    case "message_stop":
      info.terminal = true;
      break;
    case "error": {
      const e = obj.error;
      info.errorType = isObj(e) && typeof e.type === "string" ? e.type : null;
      info.errorMessage = `${info.errorType !== null ? `${info.errorType}: ` : ""}${errorText(e ?? obj)}`;
      break;
    }
    default:
      // ping, content_block_stop and events of later versions carry nothing measured
      if (obj.error !== undefined && obj.error !== null) info.errorMessage = errorText(obj.error);
  }
  readCommon(info, obj);
  return info;
}
