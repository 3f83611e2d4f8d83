/**
 * Deterministic synthetic prompts. Each word of WORDS is a single token (with its leading space)
 * in the common BPE tokenizers (Llama 3, Qwen 2/3, GPT-4 class), so `n` words give about `n`
 * prompt tokens; the server's own `usage.prompt_tokens` is what gets recorded, never this estimate.
 * A per-request nonce at the start keeps requests from sharing a cached prefix unless asked to.
 */

import { randomInt } from "node:crypto";
import type { PromptCalibration } from "../../schema/v1.ts";
import { rng } from "./arrivals.ts";
import { SAMPLE_LENGTHS } from "./sample-lengths.ts";

export const WORDS: readonly string[] = [
  ...new Set(
    (
      "the of and to in is was for on that with as it by at from his her an be this are or which had " +
      "not but were have one they all has their been more new who after first also two time other its " +
      "she there would when into only over some can most city made later up world year out three him " +
      "may game then about state what season while part between film team under during many well war " +
      "both where school these known being such since four before through south group last north team " +
      "work life main five early local west high used east family best long music album name line public " +
      "series three house club river small great people around until number second left place led own " +
      "played against each major body old order book home three same king side show party several four " +
      "general town united three form area near set five land point based power field good water sea"
    ).split(" "),
  ),
];

export function promptWords(tokens: number, seed: number): string {
  const r = rng(seed);
  const out: string[] = new Array(tokens);
  for (let i = 0; i < tokens; i++) out[i] = WORDS[Math.floor(r() * WORDS.length)]!;
  return out.join(" ");
}

/**
 * A run's salt, mixed into every unique tag and every shared text a sweep builds: without it a
 * run's "unique" prompts are the previous run's (same seed, same ids), and a server that kept
 * them in its prefix cache serves them cached (seen against llama.cpp: 81 of 99 tokens).
 */
export function newRunSalt(): number {
  return randomInt(1_000_000);
}

/** FNV-1a over a string from a given basis: 32 bits. */
function fnv(s: string, basis: number): number {
  let h = basis >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * `words` words that are the same wherever `key` recurs in a run (a system prompt a fleet of
 * agents shares, a trace's block): the run's salt keeps another run's cache from serving them.
 */
export function keyedWords(words: number, key: string, salt = 0): string {
  return promptWords(words, fnv(`${salt}:${key}`, 0x811c9dc5));
}

/**
 * The tag's alphabet: the 32 most common English words, one token (with its leading space) in any
 * modern BPE vocabulary; rarer words are not everywhere (the test model split some into two).
 */
const TAG_ALPHABET = WORDS.slice(0, 32);
/** Words in a unique tag: 32^8 = 1.1e12 tags, so no two requests of any run share one. */
export const TAG_WORDS = 8;
/** The fewest words a tagged prompt has: the tag and one word. */
export const MIN_TAGGED_WORDS = TAG_WORDS + 1;

/**
 * The unique tag of (salt, nonce): TAG_WORDS words picked by a hash, so two prompts' tags differ
 * from their first word (a prompt shares nothing with another beyond the server's template), a
 * run's tags differ from every other run's, and every tag counts the same tokens (each word is
 * one token; digits would not be: BPE vocabularies merge digit runs unevenly).
 */
export function uniqueTag(nonce: number, salt = 0): string {
  const key = `${salt}:${nonce}`;
  // two 32-bit hashes, read 5 bits at a time: 4 words from each
  const words = (h: number) => [0, 5, 10, 15].map((b) => TAG_ALPHABET[(h >>> b) & 31]!);
  return [...words(fnv(key, 0x811c9dc5)), ...words(fnv(key, 0x9e3779b9))].join(" ");
}

/**
 * A prompt of `words` words (about as many tokens before calibration; at least MIN_TAGGED_WORDS
 * with a nonce). With a nonce, it starts with the unique tag (uniqueTag), so the unique part
 * comes first in the user content and every prompt of a length counts the same tokens (no
 * shared prefix beyond the server's template).
 */
export function makePrompt(words: number, seed: number, nonce: number | null, salt = 0): string {
  if (nonce === null) return promptWords(words, seed);
  return `${uniqueTag(nonce, salt)} ${promptWords(Math.max(1, words - TAG_WORDS), seed)}`;
}

export interface PromptShape {
  promptTokens: number;
  maxTokens: number;
}

/**
 * Request shapes for a level: `fixed` gives every request the same lengths; `sample` draws
 * (prompt, output) pairs from the bundled 300-row synthetic distribution, seeded, with
 * output lengths capped by `maxTokens`.
 */
export function shapeFor(
  kind: "fixed" | "sample",
  index: number,
  seed: number,
  fixed: PromptShape,
): PromptShape {
  if (kind === "fixed") return fixed;
  const r = rng((seed * 1_000_003 + index) >>> 0);
  const row = SAMPLE_LENGTHS[Math.floor(r() * SAMPLE_LENGTHS.length)]!;
  return { promptTokens: row[0], maxTokens: Math.min(row[1], fixed.maxTokens) };
}

/** Words for a prompt of `tokens` server-counted tokens under a calibration. */
export function wordsFor(cal: PromptCalibration, tokens: number): number {
  if (tokens === cal.target_tokens) return cal.words;
  return Math.max(1, cal.words + Math.round((tokens - cal.target_tokens) / cal.tokens_per_word));
}
