/** Stable per-request error codes. They are part of schema v1's vocabulary: never rename one. */
export const ErrorCode = {
  /** TCP connect failed (refused, unreachable, DNS). */
  connectFailed: "connect_failed",
  /** The server answered with HTTP status >= 400. */
  httpError: "http_error",
  /** HTTP 200 but the body is not `text/event-stream`. */
  notSse: "not_sse",
  /** A `data:` payload that is not valid JSON. */
  malformedChunk: "malformed_chunk",
  /** A JSON `error` object (or `event: error`, Responses `response.failed`) in the stream, or a JSON error body with a 200. */
  serverErrorEvent: "server_error_event",
  /** The connection was reset or closed before the stream finished. */
  connectionReset: "connection_reset",
  /** The stream finished without a `usage` object (TPOT cannot be computed honestly). */
  missingUsage: "missing_usage",
  /** The stream ended without `data: [DONE]`. */
  missingDone: "missing_done",
  /** The stream finished without a single content-bearing event. */
  emptyStream: "empty_stream",
  /** The request ran past `--timeout-s`. */
  timeout: "timeout",
  /** The response passed the byte cap for one response (an endless stream). */
  responseTooLarge: "response_too_large",
  /** One SSE line (or one event's data) passed the byte cap without ending. */
  lineTooLong: "line_too_long",
  /**
   * A usage count that is not a non-negative integer (e.g. `completion_tokens: 8.5`), or one that
   * cannot be true (more than twice max_tokens, or 64 tokens per content event received).
   */
  invalidUsage: "invalid_usage",
  /** The stream carries several choices (`n > 1`): no per-token figure would be one answer's. */
  multipleChoices: "multiple_choices",
  /** The stream came compressed (`content-encoding`) though none was asked for: its timing is not the tokens'. */
  unsupportedEncoding: "unsupported_encoding",
  /** Anything else the HTTP stack raised. */
  clientError: "client_error",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Caps on what one measured response may hold (defaults; see `StreamClient`). */
export const STREAM_LIMITS = {
  /** 64 MiB: about 300,000 tokens of typical chunks; an endless stream is cut here. */
  maxResponseBytes: 64 * 1024 * 1024,
  /** 1 MiB for one line or one event's data. */
  maxLineBytes: 1024 * 1024,
};
