/** Small non-streaming HTTP helpers (model discovery, metadata, /metrics). Never throw. */
import { request } from "undici";
import { TokenbenchError } from "../schema/errors.ts";
import { completionsPath, rootUrl, type Target, url, withModel } from "./target.ts";

export interface HttpResult {
  status: number | null;
  text: string | null;
  json: unknown;
  error: string | null;
  elapsedMs: number;
}

export async function httpCall(
  url: string,
  opts: {
    method?: "GET" | "POST";
    body?: unknown;
    headers?: Record<string, string>;
    timeoutMs?: number;
  } = {},
): Promise<HttpResult> {
  const t0 = performance.now();
  try {
    const res = await request(url, {
      method: opts.method ?? "GET",
      headers: {
        ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      headersTimeout: opts.timeoutMs ?? 10_000,
      bodyTimeout: opts.timeoutMs ?? 10_000,
    });
    const text = await res.body.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.statusCode, text, json, error: null, elapsedMs: performance.now() - t0 };
  } catch (err) {
    const e = err as Error & { code?: string };
    return {
      status: null,
      text: null,
      json: null,
      error: `${e.code ?? e.name}: ${e.message}`,
      elapsedMs: performance.now() - t0,
    };
  }
}

/** First model id from `/v1/models`, or null. */
export async function discoverModel(target: Target): Promise<string | null> {
  const r = await httpCall(url(target, "/v1/models"), { headers: { ...target.headers }, timeoutMs: 10_000 });
  const data = (r.json as { data?: { id?: unknown }[] } | null)?.data;
  const id = Array.isArray(data) ? data[0]?.id : undefined;
  return typeof id === "string" ? id : null;
}

/**
 * The target with its model: as given, else the first entry of /v1/models. The one place a
 * missing model becomes an error (`model_unknown`), for the sweep, the profile and the Action.
 */
export async function resolveModel(target: Target, discovered?: string | null): Promise<Target> {
  if (target.model !== null) return target;
  const m = discovered ?? (await discoverModel(target));
  if (m === null || m === undefined) {
    throw new TokenbenchError(
      "model_unknown",
      `no model given and ${rootUrl(target)}/v1/models did not name one: pass --model (Action input "model")`,
    );
  }
  return withModel(target, m);
}

/** A non-streaming 1-token request for `model` (readiness of servers without /health, model checks). */
export function oneTokenRequest(target: Target, model: string, timeoutMs = 30_000): Promise<HttpResult> {
  return httpCall(url(target, completionsPath(target.api)), {
    method: "POST",
    headers: { ...target.headers },
    body:
      target.api === "chat"
        ? { model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }
        : { model, prompt: "ping", max_tokens: 1 },
    timeoutMs,
  });
}
