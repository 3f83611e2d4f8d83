/**
 * The output-consistency check (`--consistency N`): N fixed prompts, each asked once at
 * temperature 0 with a fixed seed, before the first level, their answers fingerprinted into the
 * document, so that a comparison can say how many answers differ from the base's and where the
 * first one does. A server that got faster by answering differently is then named beside the
 * speed verdict (CONCEPTS.md "Valid runs"). The prompts are the same in every run of every
 * workload and share nothing with a measured prompt, so no measured request finds them cached.
 */
import { createHash } from "node:crypto";
import type { ConsistencyRecord } from "../../schema/v1.ts";
import { httpCall } from "./http.ts";
import { completionsPath, generationBody, type ResolvedTarget, url } from "./target.ts";

/** Tokens each answer is asked for: enough to show a different decode, short enough to cost nothing. */
export const CONSISTENCY_TOKENS = 32;
/** Characters of each answer kept in the document (the place of the first difference is in them). */
const KEPT_CHARS = 400;

const TOPICS = [
  "the boiling point of water at sea level",
  "how a bicycle stays upright",
  "why the sky is blue",
  "what a prime number is",
  "how bread rises",
  "the difference between weather and climate",
  "what a hash table does",
  "how tides are caused",
];

/** The k-th fixed prompt: the same text in every run, tagged so it shares no prefix with a measured one. */
export function consistencyPrompt(k: number): string {
  return `[tokenbench consistency ${k}] In one short paragraph, explain ${TOPICS[k % TOPICS.length]}${k >= TOPICS.length ? ` (variant ${Math.floor(k / TOPICS.length)})` : ""}.`;
}

/** The text of a non-streaming answer, in each API's shape. */
function answerText(json: unknown): string | null {
  const j = json as {
    choices?: { message?: { content?: unknown }; text?: unknown }[];
    output?: { content?: { text?: unknown }[] }[];
    output_text?: unknown;
    content?: { type?: unknown; text?: unknown }[];
  } | null;
  if (Array.isArray(j?.content)) {
    // Messages: the answer's text blocks (thinking and tool_use blocks are not its text)
    const texts = j.content.filter((b) => b?.type === "text").map((b) => b.text);
    return texts.length > 0 && texts.every((t) => typeof t === "string") ? texts.join("") : null;
  }
  const c = j?.choices?.[0];
  if (typeof c?.message?.content === "string") return c.message.content;
  if (typeof c?.text === "string") return c.text;
  if (typeof j?.output_text === "string") return j.output_text;
  const parts = j?.output?.flatMap((o) => o.content ?? []).map((p) => p.text);
  return parts && parts.length > 0 && parts.every((p) => typeof p === "string") ? parts.join("") : null;
}

export async function checkConsistency(target: ResolvedTarget, n: number): Promise<ConsistencyRecord> {
  const outputs: ConsistencyRecord["outputs"] = [];
  for (let k = 0; k < n; k++) {
    const body = {
      ...generationBody(
        target.api,
        target.model,
        { prompt: consistencyPrompt(k) },
        CONSISTENCY_TOKENS,
        false,
      ),
      temperature: 0,
      seed: 0,
    };
    const r = await httpCall(url(target, completionsPath(target.api)), {
      method: "POST",
      headers: { ...target.headers },
      body,
      timeoutMs: 60_000,
    });
    const text = r.status === 200 ? answerText(r.json) : null;
    outputs.push(
      text === null
        ? {
            prompt: k,
            sha256: null,
            text: null,
            error: r.error ?? `HTTP ${r.status}${r.status === 200 ? ": no answer text in the response" : ""}`,
          }
        : {
            prompt: k,
            sha256: createHash("sha256").update(text).digest("hex"),
            text: text.slice(0, KEPT_CHARS),
            error: null,
          },
    );
  }
  return { prompts: n, max_tokens: CONSISTENCY_TOKENS, temperature: 0, seed: 0, outputs };
}
