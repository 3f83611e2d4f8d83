/** A request's record in schema v1: every timestamp the client took, and what the server said. */
import { z } from "zod";
import { nullableNum, num, RequestError } from "./common.ts";

export const Usage = z.object({
  prompt_tokens: z.number().int().nonnegative().nullable(),
  completion_tokens: z.number().int().nonnegative().nullable(),
  /** null when the server did not report prompt_tokens_details. */
  cached_tokens: z.number().int().nonnegative().nullable(),
});
export type Usage = z.infer<typeof Usage>;

/**
 * One request, as measured. All `*_ms` timestamps are milliseconds on the run's monotonic clock
 * (`clock.origin_*`), so any figure can be recomputed from them.
 */
export const RequestRecord = z.object({
  id: z.number().int().nonnegative(),
  level: z.number(),
  warmup: z.boolean(),
  /** Open loop: when the arrival process wanted this request sent. Null in closed loop. */
  intended_send_ms: nullableNum,
  /** When the request's headers were written to the socket (undici), the "actual send". */
  send_ms: num,
  /** When tokenbench handed the request to undici; send_ms - dispatch_ms is the client's own queue. */
  dispatch_ms: num.optional(),
  /** When the connection this request opened was established (absent: it reused one). */
  connected_ms: num.optional(),
  headers_ms: nullableNum,
  first_token_ms: nullableNum,
  last_token_ms: nullableNum,
  end_ms: nullableNum,
  /** Receive time of every content-bearing event, in order. */
  event_times_ms: z.array(num),
  /** Characters of content (and reasoning) text carried by each content-bearing event. */
  event_text_chars: z.array(z.number().int().nonnegative()),
  /** Every SSE data event, content-bearing or not ([DONE] excluded). */
  event_count: z.number().int().nonnegative(),
  prompt_tokens_requested: z.number().int().nonnegative().nullable(),
  max_tokens: z.number().int().nonnegative().nullable(),
  usage: Usage.nullable(),
  finish_reason: z.string().nullable(),
  http_status: z.number().int().nullable(),
  error: RequestError.nullable(),
  /** Server-side send timestamps (mock `x-tokenbench-server-ts`), when the server provides them. */
  server_event_times_ms: z.array(num).optional(),
  /** When the server received the request, on the same clock (mock `tokenbench_server_arrival_ts_ms`). */
  server_arrival_ms: num.optional(),
  /**
   * Times the request was sent again because the kept-alive connection it went out on turned out
   * to be closed before any response byte (e.g. llama.cpp closes after every stream). Latencies
   * count from the send that was answered. Absent: sent once.
   */
  retries: z.number().int().positive().optional(),
  /** Sent during `--ramp-up-s`, before measurement: excluded from every figure (also marked warmup). */
  ramp: z.literal(true).optional(),
  /** `--base-url A,B`: the server it went to, by its place in the configuration's `endpoints.base_urls` (absent: one server). */
  endpoint: z.number().int().nonnegative().optional(),
  /** `--turns`: the conversation this request belongs to (the id of its first turn). */
  session: z.number().int().nonnegative().optional(),
  /** `--turns`: this request's turn in its conversation, from 1 (the history before it is re-sent). */
  turn: z.number().int().positive().optional(),
  /** `--agent-sessions`: the calls the job's session makes in all, its subagents' included (turn counts them in the order sent). */
  job_calls: z.number().int().positive().optional(),
  /** `--agent-sessions`: the tool's run this call waited after the previous call of its context ended, ms. */
  tool_wait_ms: z.number().nonnegative().optional(),
  /** What the server reported of its own timing, kept as sent (llama.cpp `timings`: prompt_ms, predicted_ms, cache_n, ...). */
  server_timings: z.record(z.string(), z.unknown()).optional(),
  /** The server's `usage` object as sent, when it carries more than the three counts (details). */
  usage_raw: z.record(z.string(), z.unknown()).optional(),
  /**
   * Reasoning (thinking) came: its first event, and the first answer token after it (content or a
   * tool call; null: no answer came). Absent: no reasoning, the first token was the answer's.
   */
  first_reasoning_ms: nullableNum.optional(),
  first_answer_ms: nullableNum.optional(),
  /** Content events that carried reasoning (a separate field, or inside `<think>` tags). */
  reasoning_events: z.number().int().nonnegative().optional(),
  /** Reasoning tokens, and where the count came from: the server's usage details, or the events' share of completion_tokens. */
  reasoning_tokens: z.number().int().nonnegative().optional(),
  reasoning_tokens_source: z.enum(["usage", "events"]).optional(),
  /** completion_tokens - reasoning_tokens. */
  answer_tokens: z.number().int().nonnegative().optional(),
  /** The first tool-call event (its name or arguments), and how many tool calls the response made. */
  first_tool_call_ms: num.optional(),
  tool_calls: z.number().int().nonnegative().optional(),
  /** Events that came after the end of the stream (`[DONE]`, Responses' terminal event): not counted. */
  events_after_done: z.number().int().positive().optional(),
  /** Reasoning tokens the usage claimed beyond the completion's own count: not believed (the stream's count is used). */
  reasoning_usage_ignored: z.number().nonnegative().optional(),
  /** A dataset entry drawn again after every entry was sent: with a unique tag ahead of it, or exactly (`--dataset-reuse exact`). */
  prompt_reuse: z.enum(["tagged", "exact"]).optional(),
  /** `--repeats N`: which repeat of the sweep sent it (0-based; absent: the only one). */
  repeat: z.number().int().nonnegative().optional(),
  /** `--ab`: which block of the job sent it (the document's `ab.blocks`: the base's server or the head's). */
  block: z.number().int().nonnegative().optional(),
  /** ignore_eos was asked and the response stopped short of max_tokens (the server ignored it). */
  short_output: z.literal(true).optional(),
});
export type RequestRecord = z.infer<typeof RequestRecord>;
