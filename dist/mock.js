import { createRequire as __tbCreateRequire } from 'node:module'; const require = __tbCreateRequire(import.meta.url);

// src/mock/options.ts
var FLAVORS = ["vllm", "sglang", "freetoken", "llamacpp", "minimal"], FAULT_KINDS = [
  "http500",
  "http503",
  "http429",
  "reset",
  "stall",
  "malformed",
  "no_usage",
  "no_done",
  "slow_first_byte",
  // an `event: error` frame halfway, then the end of the stream
  "error_event",
  // a 200 whose body is a JSON error instead of a stream
  "error_body",
  // ignore_eos ignored: stop with "stop" at half of max_tokens
  "early_stop",
  // usage.completion_tokens of 10^15
  "huge_usage",
  // every content chunk carries a second choice (index 1), as n = 2 would
  "two_choices",
  // every prompt reported cached and its prefill skipped, as a response cache would (unasked)
  "cache_all",
  // a request whose client went away keeps its slot: never freed, as a leaking server's
  "leak",
  // a request whose client went away is freed in the server's account but decodes on out of sight:
  // every later request's time to first token grows by half the base TTFT per such zombie
  "zombie"
], PROTOCOL_VARIANTS = [
  "cr",
  "crlf",
  "bom",
  "no-space",
  "multiline",
  "comments",
  "ids",
  "after-done",
  "early-hints"
], REASONING_FIELDS = ["reasoning_content", "reasoning", "think"];
function parseFault(s) {
  let m = /^([a-z0-9_]+)(?::([0-9.]+)|@([0-9]+))$/.exec(s.trim());
  if (!m || !FAULT_KINDS.includes(m[1]))
    throw new Error(
      `invalid fault "${s}": expected KIND:RATE or KIND@N with KIND one of ${FAULT_KINDS.join(", ")}`
    );
  let rate = m[2] !== void 0 ? Number(m[2]) : null, every = m[3] !== void 0 ? Number(m[3]) : null;
  if (rate !== null && !(rate >= 0 && rate <= 1))
    throw new Error(`invalid fault "${s}": rate must be in [0, 1]`);
  if (every !== null && !(every >= 1)) throw new Error(`invalid fault "${s}": N must be >= 1`);
  return { kind: m[1], rate, every };
}
var DEFAULT_MOCK_OPTIONS = {
  host: "127.0.0.1",
  port: 8001,
  flavor: "vllm",
  model: "mock-model",
  maxModelLen: 32768,
  ttftMs: 80,
  prefillMsPer1k: 0,
  itlMs: 12,
  itlJitterMs: 0,
  ttftJitterMs: 0,
  tokensPerChunk: 1,
  capacity: 32,
  maxQueue: null,
  rejectStatus: 503,
  itlGrowthPerRunning: 0,
  kvTokens: 0,
  prefixCacheTokens: 65536,
  blockTokens: 16,
  meanOutputTokens: 128,
  defaultMaxTokens: 256,
  seed: 1,
  serverVersion: null,
  answerVariant: 0,
  loadTimeS: 0,
  serverTimestamps: !1,
  faults: [],
  stallS: 2,
  slowFirstByteMs: 1e3,
  cudaGraphMaxBs: null,
  reasoningTokens: 0,
  reasoningField: "reasoning_content",
  reasoningUsage: !1,
  protocol: []
}, HTTP_FAULTS = {
  http500: [500, "injected fault: internal server error", "internal_error"],
  http503: [503, "injected fault: service unavailable", "unavailable_error"],
  http429: [429, "injected fault: too many requests", "rate_limit_error"]
};

// src/mock/server.ts
import http from "node:http";
import { performance as performance4 } from "node:perf_hooks";

// src/mock/engine.ts
import { performance as performance3 } from "node:perf_hooks";

// src/mock/request.ts
import { randomBytes } from "node:crypto";

// src/mock/tokenizer.ts
var TOKEN_RE = /[A-Za-z0-9]+|[^\sA-Za-z0-9]/g;
function tokenize(text) {
  return text.match(TOKEN_RE) ?? [];
}
function countTokens(text) {
  let n = 0;
  for (TOKEN_RE.lastIndex = 0; TOKEN_RE.exec(text) !== null; ) n++;
  return n;
}
function hashChain(prev, s) {
  let h = (prev ^ 2166136261) >>> 0;
  for (let i = 0; i < s.length; i++)
    h ^= s.charCodeAt(i), h = Math.imul(h, 16777619) >>> 0;
  return h;
}

// src/mock/http.ts
var HttpError = class extends Error {
  constructor(status, message, type = "invalid_request_error") {
    super(message);
    this.status = status;
    this.type = type;
  }
  status;
  type;
};
function sendJson(res, status, body) {
  let s = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(s) }), res.end(s);
}
function sendError(res, status, message, type) {
  sendJson(res, status, { error: { message, type, param: null, code: status } });
}
function promptOf(body, chat) {
  if (chat) {
    let msgs = body.messages;
    if (!Array.isArray(msgs) || msgs.length === 0)
      throw new HttpError(400, "'messages' must be a non-empty array");
    let parts = [];
    for (let m of msgs) {
      let c = m?.content;
      if (typeof c == "string") parts.push(c);
      else if (Array.isArray(c))
        for (let p2 of c)
          typeof p2?.text == "string" && parts.push(p2.text);
      else throw new HttpError(400, "each message needs a string 'content'");
    }
    return tokenize(parts.join(`
`));
  }
  let p = body.prompt;
  if (typeof p == "string") return tokenize(p);
  if (Array.isArray(p) && p.every((x) => typeof x == "string")) return tokenize(p.join(`
`));
  throw new HttpError(400, "'prompt' must be a string");
}
async function readJson(req, empty = null) {
  let chunks = [], size = 0;
  for await (let c of req) {
    if (size += c.length, size > 64 * 1024 * 1024) throw new HttpError(413, "request body too large");
    chunks.push(c);
  }
  let text = Buffer.concat(chunks).toString("utf8");
  if (text === "" && empty !== null) return empty;
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    throw new HttpError(400, "request body is not valid JSON");
  }
  if (v === null || typeof v != "object" || Array.isArray(v))
    throw new HttpError(400, "request body must be a JSON object");
  return v;
}
function messagesPrompt(body) {
  let s = body.system, system = typeof s == "string" ? s : Array.isArray(s) ? s.map(
    (b) => typeof b?.text == "string" ? b.text : ""
  ).join(`
`) : s === void 0 ? "" : null;
  if (system === null) throw new HttpError(400, "'system' must be a string or an array of text blocks");
  let rest = promptOf(body, !0);
  return system === "" ? rest : [...tokenize(system), ...rest];
}
function messagesMaxTokens(body) {
  if (body.max_tokens === void 0) throw new HttpError(400, "max_tokens: Field required");
}

// src/mock/request.ts
function validateCompletion(body, api, o, stored) {
  if (typeof body.model != "string") throw new HttpError(400, "'model' is required");
  if (body.model !== o.model)
    throw new HttpError(400, `The model \`${body.model}\` does not exist.`, "NotFoundError");
  let promptTokens;
  if (api === "responses") {
    let prev = body.previous_response_id, before = typeof prev == "string" ? stored.get(prev) : [];
    if (before === void 0) throw new HttpError(400, `Previous response with id '${prev}' not found.`);
    promptTokens = [...before, ...inputOf(body)];
  } else api === "messages" ? (messagesMaxTokens(body), promptTokens = messagesPrompt(body)) : promptTokens = promptOf(body, api === "chat");
  if (promptTokens.length >= o.maxModelLen)
    throw new HttpError(
      400,
      `prompt of ${promptTokens.length} tokens exceeds max_model_len ${o.maxModelLen}`
    );
  let maxTokens = typeof body.max_tokens == "number" ? body.max_tokens : typeof body.max_completion_tokens == "number" ? body.max_completion_tokens : typeof body.max_output_tokens == "number" ? body.max_output_tokens : o.defaultMaxTokens;
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    throw new HttpError(400, "'max_tokens' must be an integer >= 1");
  return { promptTokens, maxTokens };
}
function inputOf(body) {
  let input = body.input;
  if (typeof input == "string") return tokenize(input);
  if (!Array.isArray(input) || input.length === 0)
    throw new HttpError(400, "'input' must be a string or a non-empty array of items");
  let parts = [];
  for (let item of input) {
    let c = item?.content;
    if (typeof c == "string") parts.push(c);
    else if (Array.isArray(c))
      for (let p of c)
        typeof p?.text == "string" && parts.push(p.text);
    else throw new HttpError(400, "each input item needs a 'content'");
  }
  return tokenize(parts.join(`
`));
}
function toolOf(body) {
  let tools = body.tools;
  if (!Array.isArray(tools) || tools.length === 0 || body.tool_choice === "none") return null;
  let choice = body.tool_choice;
  if (choice !== null && typeof choice == "object") {
    let name2 = choice.function?.name ?? choice.name;
    if (typeof name2 == "string") return name2;
  }
  let first = tools[0], name = first?.function?.name ?? first?.name;
  return typeof name == "string" ? name : "tool";
}
function newReq(a) {
  let so = a.body.stream_options, chat = a.api === "chat", prefix = a.api === "responses" ? "resp" : a.api === "messages" ? "msg" : chat ? "chatcmpl" : "cmpl";
  return {
    o: a.o,
    seq: a.seq,
    id: `${prefix}-${randomBytes(8).toString("hex")}`,
    res: a.res,
    api: a.api,
    chat,
    reasoning: a.api === "completions" ? 0 : Math.min(a.o.reasoningTokens, a.target),
    tool: a.api === "completions" ? null : toolOf(a.body),
    store: a.api === "responses" && a.body.store !== !1,
    stream: a.body.stream === !0,
    // the Responses and Messages APIs always report usage
    includeUsage: so?.include_usage === !0 || a.api === "responses" || a.api === "messages",
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
    roleSent: !1,
    written: 0,
    text: [],
    created: Math.floor(Date.now() / 1e3)
  };
}
function completionBody(r, usage) {
  let text = r.text.join(""), finish = r.target < r.maxTokens ? "stop" : "length";
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
        output_tokens: usage.completion_tokens
      }
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
        total_tokens: usage.total_tokens
      }
    };
  let choice = r.chat ? { index: 0, message: { role: "assistant", content: text }, finish_reason: finish } : { index: 0, text, finish_reason: finish };
  return {
    id: r.id,
    object: r.chat ? "chat.completion" : "text_completion",
    created: r.created,
    model: r.model,
    choices: [choice],
    usage
  };
}
var VOCAB = "the of and to in is was for on that with as it by at from his her an be this are or which".split(" "), vocabAt = (r, i) => VOCAB[(i + r.seq) % VOCAB.length];
function generatedTokens(r) {
  return Array.from({ length: r.emitted }, (_, i) => vocabAt(r, i));
}
function outputPlan(body, fault, promptTokens, maxTokens, o, rand) {
  let ignoreEos = body.ignore_eos === !0 && fault !== "early_stop", textKey = body.temperature === 0 ? greedyKey(promptTokens, o.answerVariant) : null;
  if (fault === "early_stop") return { target: Math.max(1, Math.floor(maxTokens / 2)), textKey };
  if (ignoreEos) return { target: maxTokens, textKey };
  let p = 1 / Math.max(1, o.meanOutputTokens), u = textKey === null ? rand() : textKey % 10007 / 10007;
  return { target: Math.min(maxTokens, 1 + Math.floor(Math.log(1 - u) / Math.log(1 - p))), textKey };
}
function greedyKey(promptTokens, variant) {
  let h = 2166136261;
  for (let t of promptTokens)
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 16777619) >>> 0;
  return h + Math.imul(variant, 7919) >>> 0;
}

// src/mock/chunks.ts
function pieceOf(r, k) {
  let reasoning = "", answer = "", from = r.emitted;
  for (let i = from; i < from + k; i++) {
    let t = ` ${vocabAt(r, i)}`;
    i < r.reasoning ? reasoning += t : answer += t;
  }
  return { reasoning, answer, from, to: from + k };
}
var pieceText = (p) => p.reasoning + p.answer;
function chunkPrefix(r) {
  return `{"id":"${r.id}","object":"${r.chat ? "chat.completion.chunk" : "text_completion"}","created":${r.created},"model":${JSON.stringify(r.model)},"choices":`;
}
function roleChunk(r) {
  return r.chat ? `data: ${chunkPrefix(r)}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

` : "";
}
function argumentsOf(r, p) {
  let a = p.answer;
  return p.from <= r.reasoning && p.to > r.reasoning && (a = `{"q":"${a}`), p.to === r.target && a !== "" && (a += '"}'), a;
}
function chatDelta(r, o, p) {
  let parts = [], content = p.answer;
  if (p.reasoning !== "")
    if (o.reasoningField === "think") {
      let open = p.from === 0 ? "<think>" : "", close = p.to >= r.reasoning ? `</think>

` : "";
      content = `${open}${p.reasoning}${close}${r.tool === null ? content : ""}`;
    } else parts.push(`${JSON.stringify(o.reasoningField)}:${JSON.stringify(p.reasoning)}`);
  if (r.tool !== null && p.answer !== "") {
    let first = p.from <= r.reasoning, head = first ? `"id":"call_${r.id.slice(-8)}","type":"function",` : "", fn = first ? `"name":${JSON.stringify(r.tool)},` : "";
    parts.push(
      `"tool_calls":[{"index":0,${head}"function":{${fn}"arguments":${JSON.stringify(argumentsOf(r, p))}}}]`
    ), o.reasoningField === "think" && p.reasoning !== "" && parts.unshift(`"content":${JSON.stringify(content)}`);
  } else (content !== "" || parts.length === 0) && parts.unshift(`"content":${JSON.stringify(content)}`);
  return `{${parts.join(",")}}`;
}
function contentChunk(r, o, p, finish, usage, ts) {
  let fin = finish === null ? "null" : `"${finish}"`, choice = r.chat ? `{"index":0,"delta":${chatDelta(r, o, p)},"logprobs":null,"finish_reason":${fin}}` : `{"index":0,"text":${JSON.stringify(pieceText(p))},"logprobs":null,"finish_reason":${fin}}`, second = r.fault === "two_choices" ? `,${choice.replace('{"index":0', '{"index":1')}` : "", s = `data: ${chunkPrefix(r)}[${choice}${second}]`;
  return usage !== null && (s += `,"usage":${usage}`), ts !== null && (s += serverStamp(r, p, ts, o)), `${s}}

`;
}
function serverStamp(r, p, ts, o) {
  let s = `,"tokenbench_server_ts_ms":${ts}`;
  return p.to <= o.tokensPerChunk && (s += `,"tokenbench_server_arrival_ts_ms":${r.tArriveHr}`), s;
}
function usageJson(r, omitDetails, o) {
  let completion = r.fault === "huge_usage" ? 1e15 : r.emitted, u = {
    prompt_tokens: r.promptTokens.length,
    total_tokens: r.promptTokens.length + completion,
    completion_tokens: completion
  };
  return omitDetails || (u.prompt_tokens_details = { cached_tokens: r.cachedTokens }), o.reasoningUsage && r.reasoning > 0 && (u.completion_tokens_details = { reasoning_tokens: Math.min(r.reasoning, r.emitted) }), JSON.stringify(u);
}
var typed = (type, body) => `event: ${type}
data: {"type":"${type}",${body}}

`;
function responsesStart(r) {
  let resp = `"response":{"id":"${r.id}","object":"response","created_at":${r.created},"status":"in_progress","model":${JSON.stringify(r.model)}}`;
  return typed("response.created", resp) + typed("response.in_progress", resp);
}
function responsesDelta(r, o, p, ts) {
  let stamp = ts !== null ? serverStamp(r, p, ts, o) : "", out = "";
  if (p.reasoning !== "" && (p.from === 0 && (out += typed(
    "response.output_item.added",
    `"output_index":0,"item":{"id":"rs_${r.id}","type":"reasoning"}`
  )), out += typed(
    "response.reasoning_text.delta",
    `"item_id":"rs_${r.id}","output_index":0,"content_index":0,"delta":${JSON.stringify(p.reasoning)}${stamp}`
  )), p.answer !== "") {
    let index = r.reasoning > 0 ? 1 : 0;
    if (p.from <= r.reasoning) {
      let item = r.tool !== null ? `{"id":"fc_${r.id}","type":"function_call","call_id":"call_${r.id.slice(-8)}","name":${JSON.stringify(r.tool)},"arguments":""}` : `{"id":"msg_${r.id}","type":"message","role":"assistant","content":[]}`;
      out += typed("response.output_item.added", `"output_index":${index},"item":${item}`);
    }
    let s = stamp;
    out += r.tool !== null ? typed(
      "response.function_call_arguments.delta",
      `"item_id":"fc_${r.id}","output_index":${index},"delta":${JSON.stringify(argumentsOf(r, p))}${s}`
    ) : typed(
      "response.output_text.delta",
      `"item_id":"msg_${r.id}","output_index":${index},"content_index":0,"delta":${JSON.stringify(p.answer)}${s}`
    );
  }
  return out;
}
function responsesLast(r, o, p, usage, ts) {
  let u = JSON.parse(usage), ru = {
    input_tokens: u.prompt_tokens,
    output_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
    input_tokens_details: u.prompt_tokens_details ?? { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: Math.min(r.reasoning, r.emitted) }
  }, incomplete = r.target >= r.maxTokens, status = incomplete ? '"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}' : '"status":"completed"', type = incomplete ? "response.incomplete" : "response.completed";
  return responsesDelta(r, o, p, ts) + typed(type, `"response":{"id":"${r.id}","object":"response",${status},"usage":${JSON.stringify(ru)}}`);
}
function wire(o, first, text) {
  let v = o.protocol;
  if (v.length === 0) return text;
  let s = text;
  return v.includes("ids") && (s = s.replace(/^data: /gm, `id: 7
retry: 3000
data: `)), v.includes("multiline") && (s = s.replace(/^data: \{"/gm, `data: {
data: "`)), v.includes("comments") && (s = s.replace(/^data: /gm, `: keep-alive
data: `)), v.includes("no-space") && (s = s.replace(/^data: /gm, "data:")), v.includes("crlf") ? s = s.replace(/\n/g, `\r
`) : v.includes("cr") && (s = s.replace(/\n/g, "\r")), first && v.includes("bom") && (s = `\uFEFF${s}`), s;
}
function afterDone(r, o) {
  return contentChunk(
    r,
    o,
    { reasoning: "", answer: " late", from: r.target, to: r.target },
    null,
    null,
    null
  );
}
var errorEvent = () => `event: error
data: {"error":{"message":"injected fault: the model crashed mid-stream","type":"internal_error"}}

`;

// src/mock/flavor.ts
function standardLastEvents(c, s, piece, finish) {
  let out = c.content(piece, finish, null);
  return s.includeUsage && (out += `data: ${c.prefix}[],"usage":${s.usage}}

`), out;
}
var plainHealth = (e) => e.loading() ? { status: 503, body: null, error: "model loading" } : { status: 200, body: null };
function coreMetrics(x, e, n) {
  x.metric(n.running[0], "gauge", n.running[1], e.running), x.metric(n.waiting[0], "gauge", n.waiting[1], e.waiting), x.metric(n.kv[0], "gauge", n.kv[1], e.kvRatio()), x.metric(n.prompt[0], "counter", n.prompt[1], e.promptTotal), x.metric(n.generation[0], "counter", n.generation[1], e.generationTotal);
}
function histograms(x, e, prefix, list) {
  for (let [key, [suffix, help]] of Object.entries(list))
    x.histogram(`${prefix}${suffix}`, help, e.h[key]);
}
function flavor(over) {
  return {
    commonRoutes: !0,
    roleChunkAtAdmission: !1,
    omitCachedDetailsWhenZero: !1,
    closeAfterStream: !1,
    streamHeaders: {},
    metricLabels: (o) => ({ model_name: o.model }),
    health: plainHealth,
    get: () => {
    },
    post: () => {
    },
    lastEvents: standardLastEvents,
    metrics: () => {
    },
    ...over
  };
}

// src/mock/metric-names.ts
var CORE_METRICS = {
  vllm: {
    running: ["vllm:num_requests_running", "Number of requests in model execution batches."],
    waiting: ["vllm:num_requests_waiting", "Number of requests waiting to be processed."],
    kv: ["vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."],
    prompt: ["vllm:prompt_tokens_total", "Number of prefill tokens processed."],
    generation: ["vllm:generation_tokens_total", "Number of generation tokens processed."]
  },
  sglang: {
    running: ["sglang:num_running_reqs", "The number of running requests."],
    waiting: ["sglang:num_queue_reqs", "The number of requests in the waiting queue."],
    kv: ["sglang:token_usage", "The token usage."],
    prompt: ["sglang:prompt_tokens_total", "Number of prefill tokens processed."],
    generation: ["sglang:generation_tokens_total", "Number of generation tokens processed."]
  },
  freetoken: {
    running: ["freetoken:requests_running", "Requests being decoded."],
    waiting: ["freetoken:requests_waiting", "Requests waiting for a slot."],
    kv: ["freetoken:kv_cache_usage_ratio", "KV cache usage, 0..1."],
    prompt: ["freetoken:prompt_tokens_total", "Prompt tokens processed."],
    generation: ["freetoken:generation_tokens_total", "Tokens generated."]
  },
  llamacpp: {
    running: ["llamacpp:requests_processing", "Number of requests processing."],
    waiting: ["llamacpp:requests_deferred", "Number of requests deferred."],
    kv: ["llamacpp:kv_cache_usage_ratio", "KV-cache usage. 1 means 100 percent usage."],
    prompt: ["llamacpp:prompt_tokens_total", "Number of prompt tokens processed."],
    generation: ["llamacpp:tokens_predicted_total", "Number of generation tokens processed."]
  }
};

// src/mock/flavors/freetoken.ts
var freetoken = flavor({
  roleChunkAtAdmission: !0,
  omitCachedDetailsWhenZero: !0,
  health(e) {
    return e.loading() ? { status: 200, body: { status: "loading", maintenance: "loading", progress: Math.min(1, (performance.now() - e.startedAtMs) / 1e3 / Math.max(e.o.loadTimeS, 1e-9)) } } : { status: 200, body: { status: "ok", maintenance: "serving" } };
  },
  get(url, e) {
    let o = e.o;
    if (url === "/v1/cache/status") {
      let c = e.cache;
      return {
        prefix_cache: {
          enabled: o.prefixCacheTokens > 0,
          capacity_tokens: o.prefixCacheTokens,
          used_tokens: c.usedTokens,
          block_tokens: o.blockTokens,
          hits: c.hits,
          queries: c.queries,
          hit_rate: c.queryTokens ? c.hitTokens / c.queryTokens : 0
        },
        kv_cache: { budget_tokens: o.kvTokens || null, used_tokens: e.kvUsed(), block_tokens: o.blockTokens },
        reports_cached_tokens: !0
      };
    }
    if (url === "/v1/stats")
      return {
        server: { name: "freetoken", version: o.serverVersion ?? "0.9.0+tokenbench.mock" },
        model: { id: o.model, context_length: o.maxModelLen },
        gpus: [{ name: "Mock GPU", vram_mib: 0 }],
        requests_running: e.running,
        requests_waiting: e.waiting,
        requests_total: e.requestsTotal,
        limits: {
          max_running_requests: o.capacity,
          cuda_graph_max_bs: o.cudaGraphMaxBs,
          max_total_num_tokens: o.kvTokens || null
        }
      };
  },
  post: (url, body) => url === "/v1/messages/count_tokens" ? { input_tokens: messagesPrompt(body).length } : void 0,
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.freetoken), histograms(x, e, "freetoken:", {
      ttft: ["time_to_first_token_seconds", "Time to first token."],
      queue: ["request_queue_time_seconds", "Time spent waiting for a slot."]
    });
  }
});

// src/mock/flavors/llamacpp.ts
var llamacpp = flavor({
  closeAfterStream: !0,
  streamHeaders: { connection: "keep-alive" },
  metricLabels: () => ({}),
  health: (e) => e.loading() ? { status: 503, body: null, error: "Loading model" } : { status: 200, body: { status: "ok" } },
  get(url, e) {
    let o = e.o;
    if (url === "/props")
      return {
        default_generation_settings: { n_ctx: o.maxModelLen, params: { n_predict: -1 } },
        total_slots: o.capacity,
        model_path: `/models/${o.model}.gguf`,
        build_info: "b0000-tokenbench-mock"
      };
    if (url === "/slots")
      return Array.from({ length: o.capacity }, (_, i) => ({
        id: i,
        n_ctx: o.maxModelLen,
        is_processing: i < e.running
      }));
  },
  post(url, body, _promptOf, e) {
    let slot = /^\/slots\/(\d+)$/.exec(url);
    if (slot) return { id_slot: Number(slot[1]), n_erased: e.cache.clear() };
    if (url !== "/tokenize") return;
    let content = typeof body.content == "string" ? body.content : "";
    return { tokens: tokenize(content).map((_, i) => i + 1) };
  },
  lastEvents(c, s, piece, finish) {
    let timings = JSON.stringify({
      cache_n: s.cachedTokens,
      prompt_n: s.promptTokens - s.cachedTokens,
      prompt_ms: s.tFirst - s.tAdmit,
      predicted_n: s.emitted,
      predicted_ms: s.now - s.tFirst
    }), fin = `data: ${c.prefix}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"${finish}"}]`;
    return s.includeUsage && (fin += `,"usage":${s.usage}`), `${c.content(piece, null, null)}${fin},"timings":${timings}}

`;
  },
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.llamacpp), x.metric("llamacpp:kv_cache_tokens", "gauge", "KV-cache tokens.", e.kvUsed());
  }
});

// src/mock/flavors/minimal.ts
var minimal = flavor({ commonRoutes: !1 });

// src/mock/flavors/sglang.ts
var sglang = flavor({
  omitCachedDetailsWhenZero: !0,
  get(url, e) {
    let o = e.o;
    if (url === "/get_model_info") return { model_path: o.model, is_generation: !0 };
    if (url === "/get_server_info")
      return {
        version: o.serverVersion ?? "0.5.0+tokenbench.mock",
        model_path: o.model,
        context_length: o.maxModelLen,
        max_running_requests: o.capacity,
        cuda_graph_max_bs: o.cudaGraphMaxBs,
        max_total_num_tokens: o.kvTokens || null,
        page_size: o.blockTokens,
        enable_prefix_caching: o.prefixCacheTokens > 0
      };
  },
  post(url, body, promptOf2, e) {
    if (url === "/flush_cache") return { flushed_tokens: e.cache.clear() };
    if (url !== "/tokenize") return;
    let toks = promptOf2(body.messages !== void 0);
    return { count: toks.length, max_model_len: e.o.maxModelLen, tokens: toks.map((_, i) => i + 1) };
  },
  lastEvents: (c, s, piece, finish) => c.content(piece, finish, s.includeUsage ? s.usage : null),
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.sglang);
    let c = e.cache;
    x.metric(
      "sglang:cache_hit_rate",
      "gauge",
      "The prefix cache hit rate.",
      c.queryTokens ? c.hitTokens / c.queryTokens : 0
    ), histograms(x, e, "sglang:", {
      ttft: ["time_to_first_token_seconds", "Histogram of time to first token in seconds."],
      itl: ["inter_token_latency_seconds", "Histogram of inter-token latency in seconds."],
      e2e: ["e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds"],
      queue: ["queue_time_seconds", "Histogram of queueing time in seconds."]
    });
  }
});

// src/mock/flavors/vllm.ts
var vllm = flavor({
  get: (url, e) => url === "/version" ? { version: e.o.serverVersion ?? "0.11.0+tokenbench.mock" } : void 0,
  post(url, body, promptOf2, e) {
    if (url === "/v1/messages/count_tokens") return { input_tokens: messagesPrompt(body).length };
    if (url === "/reset_prefix_cache") return { reset: e.cache.clear() > 0 };
    if (url !== "/tokenize") return;
    let toks = promptOf2(body.messages !== void 0);
    return { count: toks.length, max_model_len: e.o.maxModelLen, tokens: toks.map((_, i) => i + 1) };
  },
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.vllm), x.metric(
      "vllm:num_preemptions_total",
      "counter",
      "Cumulative number of preemption from the engine.",
      e.preemptions
    ), x.metric(
      "vllm:prefix_cache_queries_total",
      "counter",
      "Prefix cache queries, in tokens.",
      e.cache.queryTokens
    ), x.metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in tokens.", e.cache.hitTokens), x.metric("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", 1, {
      block_size: String(e.o.blockTokens),
      enable_prefix_caching: String(e.o.prefixCacheTokens > 0)
    }), histograms(x, e, "vllm:", {
      ttft: ["time_to_first_token_seconds", "Histogram of time to first token in seconds."],
      itl: ["inter_token_latency_seconds", "Histogram of inter-token latency in seconds."],
      e2e: ["e2e_request_latency_seconds", "Histogram of e2e request latency in seconds."],
      queue: ["request_queue_time_seconds", "Histogram of time spent in WAITING phase."],
      prefill: ["request_prefill_time_seconds", "Histogram of time spent in PREFILL phase."],
      decode: ["request_decode_time_seconds", "Histogram of time spent in DECODE phase."]
    });
  }
});

// src/mock/flavors/index.ts
var FLAVOR_MODULES = {
  vllm,
  sglang,
  freetoken,
  llamacpp,
  minimal
};

// src/mock/prefix-cache.ts
var PrefixCache = class {
  constructor(capacityTokens, blockTokens = 16) {
    this.capacityTokens = capacityTokens;
    this.blockTokens = blockTokens;
  }
  capacityTokens;
  blockTokens;
  lru = /* @__PURE__ */ new Map();
  hits = 0;
  queries = 0;
  hitTokens = 0;
  queryTokens = 0;
  blockHashes(tokens) {
    let out = [], h = 0, full = Math.floor(tokens.length / this.blockTokens);
    for (let b = 0; b < full; b++) {
      let s = tokens.slice(b * this.blockTokens, (b + 1) * this.blockTokens).join("");
      h = hashChain(h, s), out.push(h);
    }
    return out;
  }
  /** Empty the cache (a server's reset); returns the tokens it held. */
  clear() {
    let held = this.usedTokens;
    return this.lru.clear(), held;
  }
  /** Look up and insert; returns the number of cached prompt tokens. */
  lookupAndInsert(tokens) {
    if (this.capacityTokens <= 0) return 0;
    let hashes = this.blockHashes(tokens), hitBlocks = 0;
    for (let h of hashes) {
      if (!this.lru.has(h)) break;
      hitBlocks++;
    }
    for (let h of hashes)
      this.lru.delete(h), this.lru.set(h, !0);
    this.evict();
    let cached = hitBlocks * this.blockTokens;
    return this.queries++, this.queryTokens += tokens.length, cached > 0 && this.hits++, this.hitTokens += cached, cached;
  }
  /**
   * Keep a finished request's full blocks (prompt then generated tokens), as vLLM does: the next
   * turn of a conversation, which re-sends them, hits them. Not a query: the hit counters stay.
   */
  insert(tokens) {
    if (!(this.capacityTokens <= 0)) {
      for (let h of this.blockHashes(tokens))
        this.lru.delete(h), this.lru.set(h, !0);
      this.evict();
    }
  }
  evict() {
    let maxBlocks = Math.floor(this.capacityTokens / this.blockTokens);
    for (; this.lru.size > maxBlocks; ) {
      let oldest = this.lru.keys().next().value;
      this.lru.delete(oldest);
    }
  }
  get usedTokens() {
    return this.lru.size * this.blockTokens;
  }
};

// src/mock/prometheus.ts
var Histogram = class {
  constructor(buckets) {
    this.buckets = buckets;
    this.counts = new Array(buckets.length).fill(0);
  }
  buckets;
  counts;
  sum = 0;
  count = 0;
  observe(v) {
    this.sum += v, this.count++;
    for (let i = 0; i < this.buckets.length; i++) v <= this.buckets[i] && this.counts[i]++;
  }
}, fmtLabels = (labels) => {
  let parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`
  );
  return parts.length ? `{${parts.join(",")}}` : "";
}, Exposition = class {
  constructor(labels) {
    this.labels = labels;
  }
  labels;
  lines = [];
  metric(name, type, help, value, extra = {}) {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`), this.lines.push(`${name}${fmtLabels({ ...this.labels, ...extra })} ${value}`);
  }
  series(name, type, help, values) {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (let [l, v] of values) this.lines.push(`${name}${fmtLabels({ ...this.labels, ...l })} ${v}`);
  }
  histogram(name, help, h) {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    for (let i = 0; i < h.buckets.length; i++)
      this.lines.push(
        `${name}_bucket${fmtLabels({ ...this.labels, le: String(h.buckets[i]) })} ${h.counts[i]}`
      );
    this.lines.push(`${name}_bucket${fmtLabels({ ...this.labels, le: "+Inf" })} ${h.count}`), this.lines.push(`${name}_sum${fmtLabels(this.labels)} ${h.sum}`), this.lines.push(`${name}_count${fmtLabels(this.labels)} ${h.count}`);
  }
  text() {
    return `${this.lines.join(`
`)}
`;
  }
}, LATENCY_BUCKETS_S = [
  1e-3,
  5e-3,
  0.01,
  0.02,
  0.04,
  0.06,
  0.08,
  0.1,
  0.25,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10,
  20,
  40,
  80
], ITL_BUCKETS_S = [
  1e-3,
  25e-4,
  5e-3,
  75e-4,
  0.01,
  0.0125,
  0.015,
  0.02,
  0.025,
  0.03,
  0.04,
  0.05,
  0.075,
  0.1,
  0.25,
  0.5,
  1
];

// src/mock/random.ts
function seededRandom(seed) {
  let state = new Uint32Array([seed >>> 0 || 2654435769]);
  return function() {
    let x = state[0];
    return x ^= x << 13, x ^= x >>> 17, x ^= x << 5, state[0] = x, state[0] / 4294967296;
  };
}

// src/mock/messages.ts
var event = (type, body) => `event: ${type}
data: {"type":"${type}",${body}}

`;
function usageOf(r, output) {
  return `{"input_tokens":${r.promptTokens.length - r.cachedTokens},"cache_read_input_tokens":${r.cachedTokens},"output_tokens":${output}}`;
}
function messagesStart(r) {
  return event(
    "message_start",
    `"message":{"id":"${r.id}","type":"message","role":"assistant","content":[],"model":${JSON.stringify(r.model)},"stop_reason":null,"stop_sequence":null,"usage":${usageOf(r, 0)}}`
  );
}
function messagesDelta(r, o, p, ts) {
  let stamp = ts !== null ? serverStamp(r, p, ts, o) : "", out = "";
  if (p.reasoning !== "" && (p.from === 0 && (out += event("content_block_start", '"index":0,"content_block":{"type":"thinking","thinking":""}')), out += event(
    "content_block_delta",
    `"index":0,"delta":{"type":"thinking_delta","thinking":${JSON.stringify(p.reasoning)}}${stamp}`
  )), p.answer !== "") {
    let index = r.reasoning > 0 ? 1 : 0;
    if (p.from <= r.reasoning) {
      index === 1 && (out += event("content_block_stop", '"index":0'));
      let block = r.tool !== null ? `{"type":"tool_use","id":"toolu_${r.id.slice(-8)}","name":${JSON.stringify(r.tool)},"input":{}}` : '{"type":"text","text":""}';
      out += event("content_block_start", `"index":${index},"content_block":${block}`);
    }
    let delta = r.tool !== null ? `{"type":"input_json_delta","partial_json":${JSON.stringify(argumentsOf(r, p))}}` : `{"type":"text_delta","text":${JSON.stringify(p.answer)}}`;
    out += event("content_block_delta", `"index":${index},"delta":${delta}${stamp}`);
  }
  return out;
}
var stopReason = (r) => r.tool !== null ? "tool_use" : r.target >= r.maxTokens ? "max_tokens" : "end_turn";
function messagesLast(r, o, p, ts, usage, end) {
  let blocks = r.reasoning > 0 && r.emitted > r.reasoning ? 1 : 0, counts = usage ? `,"usage":{"output_tokens":${r.emitted}}` : "";
  return messagesDelta(r, o, p, ts) + event("content_block_stop", `"index":${blocks}`) + event("message_delta", `"delta":{"stop_reason":"${stopReason(r)}","stop_sequence":null}${counts}`) + (end ? `event: message_stop
data: {"type":"message_stop"}

` : "");
}
var messagesError = () => event("error", '"error":{"type":"overloaded_error","message":"injected fault: Overloaded"}');

// src/mock/stream-text.ts
var openingEvents = (r) => r.api === "responses" ? responsesStart(r) : r.api === "messages" ? messagesStart(r) : roleChunk(r);
function streamText(r, flavor2, st) {
  let o = r.o, { piece, last, ts } = st, out = "";
  if (st.first && !r.roleSent && (r.roleSent = !0, out += openingEvents(r)), r.fault === "malformed" && r.emitted > r.target / 2 && r.emitted - piece.to + piece.from <= r.target / 2 && (out += `data: {"choices": [{"delta": {"content": "oops"

`), r.fault === "error_event" && last) return out + (r.api === "messages" ? messagesError() : errorEvent());
  let finish = r.target < r.maxTokens ? "stop" : "length";
  if (r.api === "messages")
    out += last ? messagesLast(r, o, piece, ts, r.fault !== "no_usage", r.fault !== "no_done") : messagesDelta(r, o, piece, ts);
  else if (r.api === "responses")
    out += last ? responsesLast(r, o, piece, st.usage, ts) : responsesDelta(r, o, piece, ts);
  else {
    let chunks = {
      prefix: chunkPrefix(r),
      content: (p, fin, usage) => contentChunk(r, o, p, fin, usage, ts)
    };
    last ? out += flavor2.lastEvents(
      chunks,
      {
        promptTokens: r.promptTokens.length,
        cachedTokens: r.cachedTokens,
        emitted: r.emitted,
        includeUsage: r.includeUsage && r.fault !== "no_usage",
        usage: st.usage,
        tAdmit: r.tAdmit,
        tFirst: r.tFirst,
        now: st.now
      },
      piece,
      finish
    ) : out += chunks.content(piece, null, null), last && r.fault !== "no_done" && (out += `data: [DONE]

`);
  }
  return last && o.protocol.includes("after-done") && (out += afterDone(r, o)), out;
}

// src/mock/timer-queue.ts
import { performance as performance2 } from "node:perf_hooks";
var TimerQueue = class {
  heap = [];
  seq = 0;
  timer = null;
  immediate = null;
  closed = !1;
  at(t, fn) {
    if (this.closed) return;
    let e = { t, seq: this.seq++, fn }, h = this.heap;
    h.push(e);
    let i = h.length - 1;
    for (; i > 0; ) {
      let p = i - 1 >> 1;
      if (this.less(h[p], e)) break;
      h[i] = h[p], i = p;
    }
    h[i] = e, i === 0 && this.arm();
  }
  get size() {
    return this.heap.length;
  }
  close() {
    this.closed = !0, this.heap = [], this.timer && clearTimeout(this.timer), this.immediate && clearImmediate(this.immediate), this.timer = null, this.immediate = null;
  }
  less(a, b) {
    return a.t < b.t || a.t === b.t && a.seq < b.seq;
  }
  pop() {
    let h = this.heap, top = h[0], last = h.pop();
    if (h.length > 0) {
      let i = 0, n = h.length;
      for (; ; ) {
        let l = 2 * i + 1;
        if (l >= n) break;
        let r = l + 1, c = r < n && this.less(h[r], h[l]) ? r : l;
        if (this.less(last, h[c])) break;
        h[i] = h[c], i = c;
      }
      h[i] = last;
    }
    return top;
  }
  arm() {
    if (this.closed || this.heap.length === 0 || (this.timer && (clearTimeout(this.timer), this.timer = null), this.immediate)) return;
    let d = this.heap[0].t - performance2.now();
    d > 1.5 ? this.timer = setTimeout(() => this.fire(), d - 1) : this.immediate = setImmediate(() => this.fire());
  }
  fire() {
    this.timer = null, this.immediate = null;
    let now = performance2.now(), h = this.heap;
    for (; h.length > 0 && h[0].t <= now; )
      this.pop().fn();
    this.arm();
  }
};

// src/mock/engine.ts
var hrMs = () => Number(process.hrtime.bigint()) / 1e6, Engine = class {
  constructor(o) {
    this.o = o;
    this.flavor = FLAVOR_MODULES[o.flavor], this.rand = seededRandom(o.seed), this.faultRand = seededRandom(o.seed ^ 2654435769), this.cache = new PrefixCache(o.prefixCacheTokens, o.blockTokens);
  }
  o;
  timers = new TimerQueue();
  queue = [];
  active = /* @__PURE__ */ new Set();
  rand;
  faultRand;
  cache;
  startedAtMs = performance3.now();
  seq = 0;
  admitPending = !1;
  promptTotal = 0;
  generationTotal = 0;
  completed = 0;
  rejected = 0;
  cancelled = 0;
  zombies = 0;
  // requests the zombie fault freed in the account, still loading every prefill
  preemptions = 0;
  events = 0;
  faultCounts = {};
  lateness = [];
  /** Responses API: stored conversations (prompt and answer tokens) by response id, oldest first. */
  stored = /* @__PURE__ */ new Map();
  h = {
    ttft: new Histogram(LATENCY_BUCKETS_S),
    itl: new Histogram(ITL_BUCKETS_S),
    e2e: new Histogram(LATENCY_BUCKETS_S),
    queue: new Histogram(LATENCY_BUCKETS_S),
    prefill: new Histogram(LATENCY_BUCKETS_S),
    decode: new Histogram(LATENCY_BUCKETS_S)
    // first token to last (vLLM's DECODE phase)
  };
  flavor;
  close() {
    this.timers.close();
  }
  stats() {
    let s = Float64Array.from(this.lateness).sort(), q = (p) => s.length ? s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))] : null;
    return {
      requests: this.seq,
      completed: this.completed,
      rejected: this.rejected,
      cancelled: this.cancelled,
      running: this.active.size,
      waiting: this.queue.length,
      preemptions: this.preemptions,
      events: this.events,
      faults: { ...this.faultCounts },
      lateness: { n: s.length, p50: q(0.5), p99: q(0.99), max: s.length ? s[s.length - 1] : null }
    };
  }
  get running() {
    return this.active.size;
  }
  get waiting() {
    return this.queue.length;
  }
  get requestsTotal() {
    return this.seq;
  }
  loading() {
    return performance3.now() - this.startedAtMs < this.o.loadTimeS * 1e3;
  }
  kvUsed() {
    let n = 0;
    for (let r of this.active) n += r.promptTokens.length + r.emitted;
    return n;
  }
  kvRatio() {
    return this.o.kvTokens > 0 ? this.kvUsed() / this.o.kvTokens : 0;
  }
  countFault(kind) {
    this.faultCounts[kind] = (this.faultCounts[kind] ?? 0) + 1;
  }
  pickFault(seq) {
    for (let f of this.o.faults)
      if (f.every !== null && seq % f.every === 0 || f.rate !== null && this.faultRand() < f.rate) return f.kind;
    return null;
  }
  completion(req, res, body, api, arrival, arrivalHr) {
    let o = this.o, { promptTokens, maxTokens } = validateCompletion(body, api, o, this.stored);
    if (this.loading()) throw new HttpError(503, "model is still loading", "unavailable_error");
    let seq = ++this.seq, fault = this.pickFault(seq);
    fault !== null && this.countFault(fault);
    let httpFault = fault !== null ? HTTP_FAULTS[fault] : void 0;
    if (httpFault) throw new HttpError(...httpFault);
    if (o.maxQueue !== null && this.active.size >= o.capacity && this.queue.length >= o.maxQueue)
      throw this.rejected++, new HttpError(o.rejectStatus, "server queue is full", "rate_limit_error");
    let { target, textKey } = outputPlan(body, fault, promptTokens, maxTokens, o, this.rand), now = performance3.now(), r = newReq({
      seq: textKey ?? seq,
      req,
      res,
      body,
      api,
      o,
      promptTokens,
      maxTokens,
      target,
      fault,
      arrival,
      arrivalHr
    });
    this.promptTotal += promptTokens.length, res.on("close", () => {
      r.state !== "done" && (this.cancelled++, r.fault === "zombie" && r.state === "running" && this.zombies++, r.fault === "leak" && r.state === "running" ? r.gen++ : this.finish(r, performance3.now(), !1));
    });
    let begin = () => {
      if (fault === "error_body")
        return this.finish(r, performance3.now(), !1), sendJson(res, 200, {
          error: { message: "injected fault: the engine is overloaded", type: "internal_error" }
        });
      if (r.stream && o.protocol.includes("early-hints") && res.writeEarlyHints({ link: "</v1/models>; rel=preload" }), r.stream) {
        let headers = {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache"
        };
        res.writeHead(200, { ...headers, ...this.flavor.streamHeaders }), res.flushHeaders();
      }
      this.enqueue(r, performance3.now());
    };
    fault === "slow_first_byte" ? this.timers.at(now + o.slowFirstByteMs, begin) : begin();
  }
  enqueue(r, t) {
    if (r.state === "done") return;
    let someoneWaiting = this.queue.length > 0;
    this.queue.push(r), someoneWaiting || this.admitWaiting(t);
  }
  /**
   * A slot freed while requests wait is filled at the scheduler's next iteration, one decode
   * step (ITL) later, as continuous-batching servers admit waiting requests between steps.
   */
  scheduleAdmission(t) {
    if (this.queue.length === 0 || this.admitPending) return;
    this.admitPending = !0;
    let at = t + this.o.itlMs;
    this.timers.at(at, () => {
      this.admitPending = !1, this.admitWaiting(at), this.queue.length > 0 && this.active.size < this.o.capacity && this.scheduleAdmission(at);
    });
  }
  canAdmit(r) {
    return this.active.size >= this.o.capacity ? !1 : this.o.kvTokens > 0 && this.active.size > 0 ? this.kvUsed() + r.promptTokens.length + r.emitted <= this.o.kvTokens : !0;
  }
  admitWaiting(t) {
    for (; this.queue.length > 0 && this.canAdmit(this.queue[0]); ) {
      let r = this.queue.shift();
      r.state !== "done" && this.admit(r, t);
    }
  }
  admit(r, t) {
    let o = this.o;
    r.state = "running", this.active.add(r);
    let resumed = r.emitted > 0;
    if (!resumed) {
      r.tAdmit = t, this.h.queue.observe((t - r.tArrive) / 1e3);
      let hit = this.cache.lookupAndInsert(r.promptTokens);
      r.cachedTokens = r.fault === "cache_all" ? r.promptTokens.length : hit;
    }
    let uncached = resumed ? r.promptTokens.length + r.emitted : r.promptTokens.length - r.cachedTokens, prefill = o.ttftMs * (1 + 0.5 * this.zombies) + o.prefillMsPer1k * uncached / 1e3;
    !resumed && o.ttftJitterMs > 0 && (prefill += -Math.log(1 - this.rand()) * o.ttftJitterMs), resumed || this.h.prefill.observe(prefill / 1e3), this.flavor.roleChunkAtAdmission && r.stream && !r.roleSent && (r.roleSent = !0, this.write(r, openingEvents(r)));
    let gen = r.gen;
    this.timers.at(t + prefill, () => this.emit(r, t + prefill, gen));
  }
  itl() {
    let o = this.o, d = o.itlMs * (1 + o.itlGrowthPerRunning * Math.max(0, this.active.size - 1));
    return o.itlJitterMs > 0 && (d += (this.rand() * 2 - 1) * o.itlJitterMs), Math.max(0, d);
  }
  usageJson(r) {
    return usageJson(r, this.flavor.omitCachedDetailsWhenZero && r.cachedTokens === 0, this.o);
  }
  /**
   * Emit the event due at `scheduled`, and every later event of this stream that is already due
   * (zero or tiny ITL, or after a stall in the event loop), in one socket write.
   */
  emit(r, scheduled, gen) {
    let out = "", t = scheduled;
    for (; ; ) {
      let now = performance3.now(), step = this.step(r, t, now);
      if (out += step.out, step.reset) {
        let res = r.res;
        this.finish(r, now, !1), res.write(
          wire(this.o, r.written++ === 0, out),
          () => res.socket ? res.socket.resetAndDestroy() : res.destroy()
        );
        return;
      }
      if (step.last) {
        out && r.stream && this.write(r, out), this.finish(r, now, !0);
        return;
      }
      this.enforceKv();
      let next = t + this.itl() + step.extraDelayMs;
      if (r.state !== "running" || r.gen !== gen || next > performance3.now()) {
        out && r.stream && this.write(r, out), r.state === "running" && r.gen === gen && this.timers.at(next, () => this.emit(r, next, gen));
        return;
      }
      t = next;
    }
  }
  /** Stream text onto the wire, in the configured protocol variant. */
  write(r, out) {
    out !== "" && r.res.write(wire(this.o, r.written++ === 0, out));
  }
  /** One stream event: bookkeeping and its SSE text (nothing written here). */
  step(r, scheduled, now) {
    let o = this.o;
    this.lateness.length < 1e6 && this.lateness.push(now - scheduled);
    let k = Math.min(o.tokensPerChunk, r.target - r.emitted), piece = pieceOf(r, k), first = r.emitted === 0;
    r.emitted += k, this.generationTotal += k, this.events++, first ? (r.tFirst = now, this.h.ttft.observe((now - r.tArrive) / 1e3)) : this.h.itl.observe((now - r.tLast) / 1e3), r.tLast = now;
    let half = Math.floor(r.target / 2), crossedHalf = r.emitted >= half && r.emitted - k < half, last = r.emitted >= r.target || r.fault === "error_event" && crossedHalf, extraDelayMs = r.fault === "stall" && crossedHalf ? o.stallS * 1e3 : 0;
    if (!r.stream)
      return r.text.push(pieceText(piece)), { out: "", last, reset: !1, extraDelayMs };
    let ts = r.serverTs ? hrMs() : null, usage = last ? this.usageJson(r) : "", out = streamText(r, this.flavor, { piece, first, last, ts, usage, now }), reset = r.fault === "reset" && !last && r.emitted >= Math.max(1, half);
    return { out, last, reset, extraDelayMs };
  }
  /** A stored response for previous_response_id, the oldest dropped beyond 10,000. */
  keep(id, tokens) {
    this.stored.set(id, tokens), this.stored.size > 1e4 && this.stored.delete(this.stored.keys().next().value);
  }
  /** Over the KV budget: preempt the most recently admitted request (recompute policy). */
  enforceKv() {
    let budget = this.o.kvTokens;
    if (!(budget <= 0))
      for (; this.active.size > 1 && this.kvUsed() > budget; ) {
        let victim = null;
        for (let x of this.active) (victim === null || x.tAdmit >= victim.tAdmit) && (victim = x);
        if (victim === null) return;
        this.active.delete(victim), victim.state = "queued", victim.gen++, this.preemptions++, this.queue.unshift(victim);
      }
  }
  finish(r, t, ok) {
    if (r.state === "done") return;
    let wasRunning = r.state === "running";
    if (r.state = "done", r.gen++, wasRunning) this.active.delete(r);
    else {
      let i = this.queue.indexOf(r);
      i >= 0 && this.queue.splice(i, 1);
    }
    if (ok) {
      this.completed++;
      let conversation = [...r.promptTokens, ...generatedTokens(r)];
      this.cache.insert(conversation), r.store && this.keep(r.id, conversation), this.h.e2e.observe((t - r.tArrive) / 1e3), r.tFirst > 0 && this.h.decode.observe((t - r.tFirst) / 1e3), r.stream ? (r.res.end(), this.flavor.closeAfterStream && r.res.once("finish", () => r.res.socket?.destroy())) : sendJson(r.res, 200, completionBody(r, JSON.parse(this.usageJson(r))));
    }
    this.scheduleAdmission(t);
  }
};

// src/mock/server.ts
var API_ROUTES = {
  "/v1/chat/completions": "chat",
  "/v1/completions": "completions",
  "/v1/responses": "responses",
  "/v1/messages": "messages"
};
async function start(partial = {}) {
  let o = { ...DEFAULT_MOCK_OPTIONS, ...partial };
  partial.port === void 0 && (o.port = 0);
  let engine = new Engine(o), server = http.createServer({ keepAliveTimeout: 3e4, noDelay: !0 }, (req, res) => {
    handle(engine, req, res).catch((err) => {
      res.headersSent ? res.destroy() : sendError(res, 500, String(err), "internal_error");
    });
  });
  server.maxHeadersCount = 200, server.headersTimeout = 6e4, server.requestTimeout = 0, await new Promise((resolve, reject) => {
    server.once("error", reject), server.listen(o.port, o.host, () => resolve());
  });
  let port = server.address().port;
  return {
    url: `http://${o.host.includes(":") ? `[${o.host}]` : o.host}:${port}`,
    port,
    options: o,
    stats: () => engine.stats(),
    close: async () => {
      engine.close(), server.closeAllConnections(), await new Promise((resolve) => server.close(() => resolve()));
    }
  };
}
function models(o) {
  return {
    object: "list",
    data: [
      {
        id: o.model,
        object: "model",
        created: Math.floor(Date.now() / 1e3),
        owned_by: o.flavor,
        max_model_len: o.maxModelLen
      }
    ]
  };
}
function metricsText(e) {
  let x = new Exposition(e.flavor.metricLabels(e.o));
  e.flavor.metrics(x, e);
  let faults = Object.entries(e.faultCounts).map(([kind, n]) => [
    { kind },
    n
  ]);
  return x.series("tokenbench_mock_faults_total", "counter", "Faults injected by the mock, by kind.", faults), x.metric(
    "tokenbench_mock_rejected_total",
    "counter",
    "Requests rejected because the queue was full.",
    e.rejected
  ), x.text();
}
async function handle(engine, req, res) {
  let arrival = performance4.now(), arrivalHr = Number(process.hrtime.bigint()) / 1e6, url = (req.url ?? "/").split("?")[0], method = req.method ?? "GET", flavor2 = engine.flavor;
  try {
    let api = API_ROUTES[url];
    if (method === "POST" && api !== void 0) {
      let body = await readJson(req);
      return engine.completion(req, res, body, api, arrival, arrivalHr);
    }
    if (method === "GET" && url === "/mock/stats") return sendJson(res, 200, engine.stats());
    if (!flavor2.commonRoutes) throw new HttpError(404, `no route ${method} ${url}`, "not_found_error");
    if (method === "GET" && url === "/v1/models") return sendJson(res, 200, models(engine.o));
    if (method === "GET" && url === "/health") {
      let h = flavor2.health(engine);
      return h.error !== void 0 ? sendError(res, h.status, h.error, "unavailable_error") : h.body !== null ? sendJson(res, h.status, h.body) : (res.writeHead(h.status, { "content-length": 0 }), void res.end());
    }
    if (method === "GET" && url === "/metrics")
      return res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }), void res.end(metricsText(engine));
    if (method === "POST") {
      let body = await readJson(req, {}), answer = flavor2.post(url, body, (chat) => promptOf(body, chat), engine);
      if (answer !== void 0) return sendJson(res, 200, answer);
    }
    if (method === "GET") {
      let answer = flavor2.get(url, engine);
      if (answer !== void 0) return sendJson(res, 200, answer);
    }
    throw new HttpError(404, `no route ${method} ${url}`, "not_found_error");
  } catch (err) {
    if (err instanceof HttpError) return sendError(res, err.status, err.message, err.type);
    throw err;
  }
}
export {
  DEFAULT_MOCK_OPTIONS,
  FAULT_KINDS,
  FLAVORS,
  PROTOCOL_VARIANTS,
  REASONING_FIELDS,
  countTokens,
  parseFault,
  start,
  tokenize
};
