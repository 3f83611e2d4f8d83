/**
 * How to reach the server(s) under test (sweep, profile, the Action): declared once, read by
 * the CLI and the Action alike (table.ts gathers every table).
 */
import {
  headers,
  httpUrl,
  httpUrls,
  jsonObject,
  keyValues,
  number,
  oneOf,
  positive,
  text,
} from "./setting.ts";

/** How to reach the server under test (sweep, profile, the Action). */
export const CONNECTION = {
  baseUrl: httpUrls({
    flag: "base-url",
    default: "http://127.0.0.1:8000",
    help: "server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted); several comma-separated (replicas, data-parallel ranks serving one model) share the load by --endpoint-strategy, with figures per server",
  }),
  endpointStrategy: oneOf({
    flag: "endpoint-strategy",
    choices: ["round-robin", "least-in-flight"] as const,
    default: "round-robin",
    help: "with several --base-url servers, where each request goes: in turn by request number (round-robin), or to the server with the fewest of this client's requests in flight (least-in-flight); a conversation's or agent session's calls stay on the server of its first",
  }),
  serverCommand: text<string | null>({
    flag: "server-command",
    metavar: "CMD",
    default: null,
    help: "the command that starts the inference server: tokenbench starts it (bash -c), waits until it is ready, measures its start (to its first answer, ready and the first token, and the phases its log states; see --startup), and stops it when done (the Action: in its post step); its output goes to the server log beside the results",
  }),
  startup: oneOf({
    flag: "startup",
    choices: ["cold", "both"] as const,
    default: "cold",
    help: "with --server-command: measure its start once (cold), or then stop it and start it again and measure that warm start too (both; the sweep runs against the warm server)",
  }),
  abBaseUrl: httpUrl<string | null>({
    flag: "ab-base-url",
    default: null,
    help: "interleaved A/B in one job: the base branch's server (--base-url is the head's); the sweep alternates the two in blocks, a seeded order per pair, so what the job shares cancels in each pair (CONCEPTS.md, the gate)",
  }),
  abPairs: number<number>({
    flag: "ab-pairs",
    metavar: "N",
    default: 5,
    check: (n) => Number.isInteger(n) && n >= 2 && n <= 50,
    what: "an integer from 2 to 50",
    help: "with --ab-base-url: pairs of blocks (each block a whole pass over the levels on one server); with fewer the gate sees only large changes (CONCEPTS.md §13 has its power per number of pairs)",
  }),
  model: text<string | null>({
    flag: "model",
    metavar: "ID",
    default: null,
    help: "model name (default: the first entry of /v1/models)",
  }),
  api: oneOf({
    flag: "api",
    choices: ["chat", "completions", "responses", "messages"] as const,
    default: "chat",
    help: "API to call: chat completions, completions, the Responses API (/v1/responses) or the Messages API (/v1/messages, the Anthropic shape agents speak)",
  }),
  apiKey: text<string | null>({
    flag: "api-key",
    input: "server-api-key",
    metavar: "KEY",
    secret: true,
    default: null,
    env: ["TOKENBENCH_API_KEY", "OPENAI_API_KEY"],
    help: "bearer key for the server under test, if it needs one",
  }),
  headers: headers({ flag: "header", input: "headers", default: {}, help: "extra request header" }),
  timeoutS: number<number>({
    flag: "timeout-s",
    metavar: "S",
    default: 300,
    check: positive,
    what: "a positive number of seconds",
    help: "per-request timeout in seconds",
  }),
  extraBody: jsonObject({
    flag: "extra-body",
    default: {},
    help: 'JSON object merged into every request body, e.g. {"chat_template_kwargs":{"enable_thinking":false}}',
  }),
  readyTimeoutS: number<number>({
    flag: "ready-timeout-s",
    metavar: "S",
    default: 600,
    check: positive,
    what: "a positive number of seconds",
    help: "seconds to wait for the server to become ready",
  }),
  serverLimits: keyValues({
    flag: "server-limit",
    default: {},
    help: "a limit the server does not expose, e.g. max_running_requests=8",
  }),
};
