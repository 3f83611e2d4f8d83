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
  /** The server said it is overloaded mid-stream (the Messages API's `overloaded_error` event). */
  serverOverloaded: "server_overloaded",
  /** The connection was reset or closed before the stream finished. */
  connectionReset: "connection_reset",
  /** The stream finished without a `usage` object (TPOT cannot be computed honestly). */
  missingUsage: "missing_usage",
  /** The stream ended without its end (`data: [DONE]`, `response.completed`, `message_stop`). */
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
  /** The client aborted the stream on purpose (`--cancel-share`): kept apart from every figure. */
  cancelled: "cancelled",
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

/** A redirect is not followed: the POST and its body would be sent again to wherever it points. */
export function redirectMessage(status: number, location: string): string {
  const to = location.slice(0, 200);
  return `HTTP ${status}: the server redirects${to ? ` to ${to}` : ""}, and tokenbench does not follow redirects; point --base-url at where it leads (http vs https, a trailing slash, another host?)`;
}

/**
 * A 2xx event stream that held no SSE event: a bare JSON error where the stream should be (a
 * server or proxy that answers 200 with it) keeps the server's message; any other body is named by
 * its first bytes. Null for an empty body (the stream's own checks say what is missing).
 */
export function noEventError(status: number | null, body: string): { code: string; message: string } | null {
  const text = body.trim();
  if (text === "") return null;
  const said = serverErrorIn(text);
  if (said !== null)
    return {
      code: ErrorCode.serverErrorEvent,
      message: `HTTP ${status} with a JSON error and no stream: ${said}`.slice(0, 1000),
    };
  return {
    code: ErrorCode.missingDone,
    message: `the body held no SSE event (no "data:" line); it began: ${text.slice(0, 200)}`,
  };
}

/**
 * A response that was not a stream, with its body: a JSON error object in it is the server's own
 * error (`server_error_event`, its message); otherwise the error keeps its code, the body beside it.
 */
export function withBody(
  error: { code: string; message: string },
  status: number | null,
  body: string,
): { code: string; message: string } {
  const said = serverErrorIn(body);
  return said !== null && error.code === ErrorCode.notSse
    ? {
        code: ErrorCode.serverErrorEvent,
        message: `HTTP ${status} with an error instead of a stream: ${said}`,
      }
    : { code: error.code, message: `${error.message}; body: ${body.slice(0, 300)}` };
}
