/** Small non-streaming HTTP helpers (readiness, metadata, model checks, /metrics). Never throw. */
import { request } from "undici";
import { completionsPath, generationBody, redacted, secretsIn, type Target, url } from "./target.ts";

export interface HttpResult {
  status: number | null;
  text: string | null;
  json: unknown;
  error: string | null;
  elapsedMs: number;
}

/** Bytes any non-measured answer may have (a /v1/models list, /metrics, /health). */
export const MAX_HTTP_BYTES = 8 * 1024 * 1024;

/**
 * One non-measured request with a total deadline: `timeoutMs` covers connecting, headers and the
 * whole body, so a server that trickles one byte at a time cannot hold it open (undici's own body
 * timeout restarts on every byte). The body is read up to `maxBytes`; past that the call fails.
 */
export async function httpCall(
  url: string,
  opts: {
    method?: "GET" | "POST";
    body?: unknown;
    headers?: Record<string, string>;
    timeoutMs?: number;
    maxBytes?: number;
  } = {},
): Promise<HttpResult> {
  const t0 = performance.now();
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? MAX_HTTP_BYTES;
  const signal = AbortSignal.timeout(timeoutMs);
  // A failed call has no status, whatever the headers said: its answer was not had.
  const fail = (error: string): HttpResult => ({
    status: null,
    text: null,
    json: null,
    error,
    elapsedMs: performance.now() - t0,
  });
  let status: number | null = null;
  try {
    const res = await request(url, {
      method: opts.method ?? "GET",
      headers: {
        ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    });
    status = res.statusCode;
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        res.body.destroy();
        return fail(`response_too_large: the answer (HTTP ${status}) passed ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    // a body that echoes the request's credentials is masked before anything reads it
    const text = redacted(Buffer.concat(chunks).toString("utf8"), secretsIn(opts.headers ?? {}));
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status, text, json, error: null, elapsedMs: performance.now() - t0 };
  } catch (err) {
    const e = err as Error & { code?: string };
    if (signal.aborted)
      return fail(
        `deadline: no complete answer within ${(timeoutMs / 1000).toFixed(1)} s${status !== null ? ` (HTTP ${status} headers came, the body did not finish)` : ""}`,
      );
    return fail(redacted(`${e.code ?? e.name}: ${e.message}`, secretsIn(opts.headers ?? {})));
  }
}

/** A non-streaming 1-token request for `model` (readiness of servers without /health, model checks). */
export function oneTokenRequest(target: Target, model: string, timeoutMs = 30_000): Promise<HttpResult> {
  return httpCall(url(target, completionsPath(target.api)), {
    method: "POST",
    headers: { ...target.headers },
    body: generationBody(target.api, model, { prompt: "ping" }, 1, false),
    timeoutMs,
  });
}
