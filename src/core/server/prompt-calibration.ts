/**
 * Sizing sweep prompts so that `--prompt-tokens N` means N prompt tokens as the server counts
 * them, chat template included. Once per run: find the server's counting method (count_tokens,
 * tokenize, else usage probes), measure what the server adds around the user content with one
 * usage probe, then search the number of words whose prompt counts N, within max(4, 0.5 %).
 */
import type { PromptCalibration } from "../../schema/v1.ts";
import { MIN_TAGGED_WORDS, makePrompt } from "../workload/prompts.ts";
import { type Counter, calibrate, detectCounter, TOLERANCE_RULE, usagePromptTokens } from "./calibration.ts";
import type { Target } from "./target.ts";

/** A prompt of the shape every request gets (unique tag, then the run's words for `seed`). */
const sampleOf = (seed: number) => (words: number) => makePrompt(words, seed, 0);
const sample = sampleOf(4242);

/**
 * The server's token count of a user message, chat template included: the best counting method
 * it offers, plus what it adds around the content (measured once with a usage probe, since a
 * counter such as llama.cpp's /tokenize counts the content alone).
 */
export async function servedCounter(
  target: Target,
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
  target: Target,
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

/** Words for a prompt of `tokens` server-counted tokens under a calibration. */
export function wordsFor(cal: PromptCalibration, tokens: number): number {
  if (tokens === cal.target_tokens) return cal.words;
  return Math.max(1, cal.words + Math.round((tokens - cal.target_tokens) / cal.tokens_per_word));
}
