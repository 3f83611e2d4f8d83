/**
 * Prompt calibration: deterministic prompts grown or shrunk until the server counts about the
 * target number of tokens, within max(4, 0.5 %). Counting method, in order of preference:
 * `/v1/messages/count_tokens`, `/tokenize`, else `usage.prompt_tokens` of `max_tokens=1` probes.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import { promptWords } from "../workload/prompts.ts";
import { httpCall } from "./http.ts";
import { completionsPath, modelOf, rootUrl, type Target, url } from "./target.ts";

export type CalibrationMethod = "count_tokens" | "tokenize" | "usage_probe";

export interface Counter {
  method: CalibrationMethod;
  count(text: string): Promise<number>;
}

export class CalibrationError extends TokenbenchError {
  constructor(message: string) {
    super("calibration_failed", message);
  }
}

export const tolerance = (target: number): number => Math.max(4, Math.ceil(0.005 * target));
export const TOLERANCE_RULE = "|reached - target| <= max(4, ceil(0.5 % of target)) tokens";

function asCount(v: unknown): number | null {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

/** usage.prompt_tokens of a max_tokens=1 request: the server's own count, template included; or null. */
export async function usagePromptTokens(
  target: Target,
  extraBody: Record<string, unknown>,
  text: string,
): Promise<number | null> {
  const r = await httpCall(url(target, completionsPath(target.api)), {
    method: "POST",
    headers: { ...target.headers },
    body: {
      model: modelOf(target),
      max_tokens: 1,
      temperature: 0,
      stream: false,
      ...extraBody,
      ...(target.api === "chat" ? { messages: [{ role: "user", content: text }] } : { prompt: text }),
    },
    timeoutMs: 120_000,
  });
  if (r.status !== 200) return null;
  return asCount((r.json as { usage?: { prompt_tokens?: unknown } } | null)?.usage?.prompt_tokens);
}

/** Find the best counting method the server offers. */
export async function detectCounter(target: Target, extraBody: Record<string, unknown>): Promise<Counter> {
  const model = modelOf(target);
  const h = { ...target.headers };
  const viaCountTokens = async (text: string) => {
    const r = await httpCall(url(target, "/v1/messages/count_tokens"), {
      method: "POST",
      headers: h,
      body: { model, messages: [{ role: "user", content: text }] },
    });
    return r.status === 200 ? asCount((r.json as { input_tokens?: unknown } | null)?.input_tokens) : null;
  };
  const viaTokenize = async (text: string) => {
    const body =
      target.api === "chat"
        ? { model, messages: [{ role: "user", content: text }], content: text }
        : { model, prompt: text, content: text };
    const r = await httpCall(url(target, "/tokenize"), { method: "POST", headers: h, body });
    if (r.status !== 200) return null;
    const j = r.json as { count?: unknown; tokens?: unknown } | null;
    return asCount(j?.count) ?? (Array.isArray(j?.tokens) ? j.tokens.length : null);
  };
  const viaUsage = (text: string) => usagePromptTokens(target, extraBody, text);
  const probe = "calibration probe text";
  if ((await viaCountTokens(probe)) !== null) return { method: "count_tokens", count: need(viaCountTokens) };
  if ((await viaTokenize(probe)) !== null) return { method: "tokenize", count: need(viaTokenize) };
  if ((await viaUsage(probe)) !== null) return { method: "usage_probe", count: need(viaUsage) };
  throw new CalibrationError(
    `cannot count tokens at ${rootUrl(target)}: /v1/messages/count_tokens, /tokenize and a max_tokens=1 usage probe all failed`,
  );
}

function need(f: (t: string) => Promise<number | null>): (t: string) => Promise<number> {
  return async (t) => {
    const n = await f(t);
    if (n === null) throw new CalibrationError("token counting stopped working during calibration");
    return n;
  };
}

export interface Calibrated {
  target: number;
  words: number;
  reached: number;
  iterations: number;
  withinTolerance: boolean;
}

/**
 * Search the number of words whose prompt (`build(words)`) counts `target` tokens. Secant-style
 * steps from a proportional guess; stops within tolerance or after `maxIter` counts.
 */
export async function calibrate(
  counter: Counter,
  target: number,
  build: (words: number) => string,
  maxIter = 12,
): Promise<Calibrated> {
  const tol = tolerance(target);
  let words = Math.max(1, target);
  let best: Calibrated | null = null;
  const seen = new Map<number, number>();
  for (let i = 1; i <= maxIter; i++) {
    const n = seen.get(words) ?? (await counter.count(build(words)));
    seen.set(words, n);
    const cand = { target, words, reached: n, iterations: i, withinTolerance: Math.abs(n - target) <= tol };
    if (best === null || Math.abs(n - target) < Math.abs(best.reached - target)) best = cand;
    if (cand.withinTolerance) return cand;
    const perWord = n > 0 ? n / words : 1;
    let next = Math.round(words + (target - n) / Math.max(perWord, 0.01));
    if (next === words) next += target > n ? 1 : -1;
    words = Math.max(1, next);
  }
  return { ...best!, iterations: maxIter };
}

/** Calibrated profile prompt: a fixed-width nonce tag, then seeded words. */
export function profilePrompt(nonce: string, words: number, seed: number): string {
  return `[${nonce}] ${promptWords(words, seed)}`;
}
