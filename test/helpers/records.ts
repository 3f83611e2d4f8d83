import type { RequestRecord } from "../../src/schema/v1.ts";

/** A hand-built request record: events at the given times (ms from origin). */
export function rec(
  p: Partial<RequestRecord> & { send_ms: number; events?: number[]; completion?: number },
): RequestRecord {
  const events = p.events ?? [];
  return {
    id: p.id ?? 0,
    level: p.level ?? 1,
    warmup: p.warmup ?? false,
    intended_send_ms: p.intended_send_ms ?? null,
    send_ms: p.send_ms,
    headers_ms: p.headers_ms ?? p.send_ms + 1,
    first_token_ms: events.length ? events[0]! : null,
    last_token_ms: events.length ? events[events.length - 1]! : null,
    end_ms: p.end_ms ?? (events.length ? events[events.length - 1]! + 1 : p.send_ms + 5),
    event_times_ms: events,
    event_text_chars: events.map(() => 3),
    event_count: events.length + 2,
    prompt_tokens_requested: 100,
    max_tokens: p.completion ?? events.length,
    usage:
      p.usage !== undefined
        ? p.usage
        : { prompt_tokens: 100, completion_tokens: p.completion ?? events.length, cached_tokens: null },
    finish_reason: "length",
    http_status: 200,
    error: p.error ?? null,
  };
}
