/**
 * The server under test, built once from the settings and handed to everything that talks to
 * it: the streaming client, readiness, the metadata snapshot, calibration, the /metrics
 * sampler. It owns URL building (a base URL may end in /v1) and the request headers (the
 * bearer key included), so neither is rebuilt anywhere else.
 */
export type ApiKind = "chat" | "completions" | "responses" | "messages";
export const API_KINDS: readonly ApiKind[] = ["chat", "completions", "responses", "messages"];

/** The Messages API's version header: the one every server that speaks it (vLLM, SGLang, llama.cpp) accepts. */
export const ANTHROPIC_VERSION = "2023-06-01";

/** One server of the run: `--base-url A,B` names several (replicas, data-parallel ranks). */
export interface Endpoint {
  /** Its base URL as it may be shown, without a trailing slash. */
  readonly baseUrl: string;
  readonly origin: string;
  readonly basePath: string;
  /** Every request's headers for this server (its own URL's credentials among them). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface Target {
  /** The base URL as given, without a trailing slash (recorded in documents); several joined by commas. */
  readonly baseUrl: string;
  readonly api: ApiKind;
  /** The model to request; null until the preflight discovers it (`ResolvedTarget`). */
  readonly model: string | null;
  /** Headers for every request to the server: the user's, plus `authorization` when a key is set. */
  readonly headers: Readonly<Record<string, string>>;
  /** scheme://host:port */
  readonly origin: string;
  /** Path prefix before /v1 (a server mounted under a sub-path), without a trailing slash. */
  readonly basePath: string;
  /**
   * Every server the load goes to, the first being the one above (origin, basePath, headers):
   * the preflight, calibration and snapshot talk to it, each other one is checked to serve the
   * same model, and the client spreads requests over all (`--endpoint-strategy`).
   */
  readonly endpoints: readonly Endpoint[];
}

/** A target whose model is known: what the preflight hands on, and all that sends a request needs. */
export interface ResolvedTarget extends Target {
  readonly model: string;
}

export interface TargetOptions {
  baseUrl: string;
  api: ApiKind;
  model: string | null;
  apiKey: string | null;
  headers: Record<string, string>;
}

export function makeTarget(o: TargetOptions & { model: string }): ResolvedTarget;
export function makeTarget(o: TargetOptions): Target;
export function makeTarget(o: TargetOptions): Target {
  const endpoints = splitBaseUrls(o.baseUrl).map((raw) => endpointOf(raw, o));
  const first = endpoints[0]!;
  return {
    baseUrl: endpoints.map((e) => e.baseUrl).join(","),
    api: o.api,
    model: o.model,
    headers: first.headers,
    origin: first.origin,
    basePath: first.basePath,
    endpoints,
  };
}

/** `--base-url A,B`: the servers, each as typed (a single URL: itself). */
export const splitBaseUrls = (raw: string): string[] =>
  raw
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");

function endpointOf(raw: string, o: TargetOptions): Endpoint {
  const u = new URL(raw);
  // Credentials in the URL (http://user:pw@host) travel as a Basic authorization header (fetch and
  // undici refuse them in a URL) and never as part of the URL a document or a message shows.
  const basic = urlBasicAuth(raw);
  return {
    baseUrl: publicUrl(raw).replace(/\/+$/, ""),
    headers: {
      ...(basic ? { authorization: basic } : {}),
      // the Messages API names its version and takes the key as x-api-key (servers that speak it
      // beside the OpenAI routes take the bearer header too, so both go)
      ...(o.api === "messages" ? { "anthropic-version": ANTHROPIC_VERSION } : {}),
      ...o.headers,
      ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}),
      ...(o.apiKey && o.api === "messages" ? { "x-api-key": o.apiKey } : {}),
    },
    origin: u.origin,
    basePath: u.pathname.replace(/\/+$/, "").replace(/\/v1$/, ""),
  };
}

/** Each server of a target as a target of its own (one endpoint): what is checked, reset or sampled per server. */
export function endpointTargets<T extends Target>(t: T): T[] {
  if (t.endpoints.length === 1) return [t];
  return t.endpoints.map((e) => ({ ...t, ...e, endpoints: [e] }));
}

/** Query parameters that carry a credential (`?api_key=…`, `?token=…`). */
const SECRET_PARAM = /^(api[-_]?key|key|token|access[-_]?token|auth|password|passwd|secret|sig|signature)$/i;

/**
 * A URL as it may be shown or recorded: its user and password and any credential-carrying query
 * parameter replaced by `***`. Not a URL (or one that does not parse): returned as it is.
 */
export function publicUrl(raw: string): string {
  if (/,\s*https?:\/\//i.test(raw))
    return raw
      .split(/,(?=\s*https?:\/\/)/i)
      .map(publicUrl)
      .join(",");
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return raw;
  }
  let changed = false;
  if (u.username !== "" || u.password !== "") {
    u.username = "***";
    u.password = "";
    changed = true;
  }
  for (const k of [...u.searchParams.keys()])
    if (SECRET_PARAM.test(k)) {
      u.searchParams.set(k, "***");
      changed = true;
    }
  if (!changed) return raw;
  // URL writes `***` percent-encoded in the user part: shown as typed
  return u.toString().replace(/%2A%2A%2A/g, "***");
}

/** The credentials a URL carries, each as typed and decoded (to be masked wherever they could appear). */
export function urlSecrets(raw: string): string[] {
  // `--base-url A,B`: each server's URL
  if (/,\s*https?:\/\//i.test(raw))
    return [...new Set(raw.split(/,(?=\s*https?:\/\/)/i).flatMap(urlSecrets))];
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [];
  }
  const out: string[] = [];
  if (u.password !== "") out.push(u.password, decodeURIComponent(u.password));
  if (u.username !== "" && u.password !== "") out.push(`${u.username}:${u.password}`);
  for (const [k, v] of u.searchParams) if (SECRET_PARAM.test(k) && v !== "") out.push(v);
  return [...new Set(out)].filter((v) => v.length >= 4);
}

/** `Basic …` for a URL's user and password, or null. */
export function urlBasicAuth(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.username === "" && u.password === "") return null;
  const pair = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  return `Basic ${Buffer.from(pair).toString("base64")}`;
}

export const withModel = (t: Target, model: string): ResolvedTarget => ({ ...t, model });

/** A path under the server's root, e.g. url(t, "/v1/models"), url(t, "/metrics"). */
export const url = (t: Target, path: string): string => t.origin + t.basePath + path;

/** The server's root URL (no /v1), for messages. */
export const rootUrl = (t: Target): string => t.origin + t.basePath;

const PATHS: Record<ApiKind, string> = {
  chat: "/v1/chat/completions",
  completions: "/v1/completions",
  responses: "/v1/responses",
  messages: "/v1/messages",
};
export const completionsPath = (api: ApiKind): string => PATHS[api];

export interface ChatMessage {
  role: string;
  content: string;
}

/**
 * The body of one generation request in the API's own words: chat `messages` + `max_tokens`,
 * completions `prompt` (a conversation's messages joined), Responses `input` items +
 * `max_output_tokens`, Messages `messages` with the system prompt apart (`system`: the API has no
 * system role) + `max_tokens`. Streaming asks for usage the way each API needs (Responses and
 * Messages always send it: `response.completed`, `message_start` and `message_delta`).
 */
export function generationBody(
  api: ApiKind,
  model: string,
  input: { prompt: string; messages?: readonly ChatMessage[] },
  maxTokens: number,
  stream: boolean,
): Record<string, unknown> {
  const messages = input.messages ?? [{ role: "user", content: input.prompt }];
  if (api === "responses")
    return { model, input: messages, max_output_tokens: maxTokens, stream, store: false };
  if (api === "messages") {
    const system = messages.filter((m) => m.role === "system").map((m) => m.content);
    const body: Record<string, unknown> = {
      model,
      messages: messages.filter((m) => m.role !== "system"),
      max_tokens: maxTokens,
      stream,
    };
    if (system.length > 0) body.system = system.join("\n\n");
    return body;
  }
  const body: Record<string, unknown> = { model, stream, max_tokens: maxTokens };
  if (stream) body.stream_options = { include_usage: true };
  if (api === "chat") body.messages = messages;
  else body.prompt = input.messages ? input.messages.map((m) => m.content).join("\n\n") : input.prompt;
  return body;
}

/**
 * The prompt tokens a non-streaming answer reports: chat/completions `prompt_tokens`, Responses
 * `input_tokens`, Messages the sum of `input_tokens` (the uncached part) and the cache's reads
 * and writes.
 */
export function promptTokensOf(api: ApiKind, json: unknown): unknown {
  const usage = (json as { usage?: Record<string, unknown> } | null)?.usage;
  if (api === "messages") {
    const parts = [
      usage?.input_tokens,
      usage?.cache_read_input_tokens ?? 0,
      usage?.cache_creation_input_tokens ?? 0,
    ];
    return parts.every((v) => typeof v === "number")
      ? (parts as number[]).reduce((a, b) => a + b, 0)
      : undefined;
  }
  return api === "responses" ? usage?.input_tokens : usage?.prompt_tokens;
}

/** What a result document records of the target. */
export const targetRecord = (t: ResolvedTarget) => ({ base_url: t.baseUrl, api: t.api, model: t.model });

/** Header names whose values are credentials (`authorization`, `x-api-key`, `cookie`, ...). */
const SECRET_HEADER = /authorization|api[-_]?key|token|secret|cookie|password|credential/i;

/**
 * The credentials among request headers: each sensitive header's value, and for `Bearer KEY` the
 * key alone too. Values under 4 characters are left out: masking "a" everywhere would hide text.
 */
export function secretsIn(headers: Readonly<Record<string, string>>): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADER.test(name)) continue;
    const v = value.trim();
    out.add(v);
    const scheme = /^\S+\s+(\S.*)$/.exec(v);
    if (scheme) out.add(scheme[1]!);
  }
  return [...out].filter((v) => v.length >= 4);
}

/**
 * `text` with every secret replaced by `***`: a server (or a proxy in front of it) that echoes
 * the request's headers in an error body must not put the key into a log, a document or a
 * comment. Longest first, so a key inside its `Bearer` form goes with it.
 */
export function redacted(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].sort((a, b) => b.length - a.length))
    if (out.includes(s)) out = out.split(s).join("***");
  return out;
}
