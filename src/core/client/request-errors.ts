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

/** The stable code of a transport failure. */
export function classifyNetworkError(
  err: Error & { code?: string },
  timedOut: boolean,
): { code: string; message: string } {
  if (timedOut) return { code: ErrorCode.timeout, message: err.message };
  const code = err.code ?? (err.cause as { code?: string } | undefined)?.code ?? "";
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    return { code: ErrorCode.timeout, message: err.message };
  }
  if (
    code === "ECONNREFUSED" ||
    code === "ENOTFOUND" ||
    code === "EHOSTUNREACH" ||
    code === "ENETUNREACH" ||
    code === "EAI_AGAIN" ||
    code === "UND_ERR_CONNECT_TIMEOUT"
  ) {
    return { code: ErrorCode.connectFailed, message: `${code}: ${err.message}` };
  }
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE" || code === "UND_ERR_CLOSED") {
    return { code: ErrorCode.connectionReset, message: `${code}: ${err.message}` };
  }
  return { code: ErrorCode.clientError, message: `${code || err.name}: ${err.message}` };
}

/** The server's own message when a body is a JSON error object (`{"error": ...}`), else null. */
export function serverErrorIn(body: string): string | null {
  try {
    const j = JSON.parse(body) as { error?: unknown; message?: unknown };
    if (j === null || typeof j !== "object" || j.error === undefined || j.error === null) return null;
    const e = j.error as { message?: unknown };
    return typeof e === "string"
      ? e
      : typeof e.message === "string"
        ? e.message
        : JSON.stringify(e).slice(0, 500);
  } catch {
    return null;
  }
}
