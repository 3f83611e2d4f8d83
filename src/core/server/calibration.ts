/**
 * Prompt calibration: deterministic prompts grown or shrunk until the server counts about the
 * target number of tokens, within max(4, 0.5 %). Counting method, in order of preference:
 * `/v1/messages/count_tokens`, `/tokenize`, else `usage.prompt_tokens` of `max_tokens=1` probes.
 *
 * A sweep calibrates once (`calibratePrompts`), so that `--prompt-tokens N` means N prompt tokens
 * as the server counts them, chat template included: find the counting method, measure what the
 * server adds around the user content with one usage probe, then search the number of words whose
 * prompt counts N. The profile calibrates each of its targets with the same counter.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { PromptCalibration } from "../../schema/v1.ts";
import { MIN_TAGGED_WORDS, makePrompt, promptWords } from "../workload/prompts.ts";
import { httpCall } from "./http.ts";
import {
  completionsPath,
  generationBody,
  promptTokensOf,
  type ResolvedTarget,
  rootUrl,
  url,
} from "./target.ts";

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
  target: ResolvedTarget,
  extraBody: Record<string, unknown>,
  text: string,
): Promise<number | null> {
  const r = await httpCall(url(target, completionsPath(target.api)), {
    method: "POST",
    headers: { ...target.headers },
    body: {
      ...generationBody(target.api, target.model, { prompt: text }, 1, false),
      temperature: 0,
      ...extraBody,
    },
    timeoutMs: 120_000,
  });
  if (r.status !== 200) return null;
  return asCount(promptTokensOf(target.api, r.json));
}

/** Find the best counting method the server offers. */
export async function detectCounter(
  target: ResolvedTarget,
  extraBody: Record<string, unknown>,
): Promise<Counter> {
  const model = target.model;
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
      target.api !== "completions"
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

/** A prompt of the shape every request gets (unique tag, then the run's words for `seed`). */
const sampleOf = (seed: number) => (words: number) => makePrompt(words, seed, 0);
const sample = sampleOf(4242);

/**
 * The server's token count of a user message, chat template included: the best counting method
 * it offers, plus what it adds around the content (measured once with a usage probe, since a
 * counter such as llama.cpp's /tokenize counts the content alone).
 */
export async function servedCounter(
  target: ResolvedTarget,
  extraBody: Record<string, unknown>,
): Promise<{ counter: Counter; overhead: number }> {
  const counter = await detectCounter(target, extraBody);
  let overhead = 0;
  if (counter.method !== "usage_probe") {
    const probe = sample(32);
    const served = await usagePromptTokens(target, extraBody, probe);
    if (served !== null) overhead = served - (await counter.count(probe));
  }
  if (overhead === 0) return { counter, overhead };
  return {
    counter: { method: counter.method, count: async (t) => (await counter.count(t)) + overhead },
    overhead,
  };
}

export async function calibratePrompts(
  target: ResolvedTarget,
  extraBody: Record<string, unknown>,
  promptTokens: number,
  seed: number,
): Promise<PromptCalibration> {
  const { counter, overhead } = await servedCounter(target, extraBody);
  const build = sampleOf(seed);
  const c = await calibrate(counter, promptTokens, build);
  const base = await counter.count(build(1));
  return {
    method: counter.method,
    template_overhead_tokens: overhead,
    target_tokens: promptTokens,
    words: c.words,
    reached_tokens: c.reached,
    within_tolerance: c.withinTolerance,
    tolerance_rule: TOLERANCE_RULE,
    tokens_per_word:
      c.words > MIN_TAGGED_WORDS ? Math.max(0.1, (c.reached - base) / (c.words - MIN_TAGGED_WORDS)) : 1,
  };
}
