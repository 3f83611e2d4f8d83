/**
 * Faster but different: the head's answers to the fixed prompts of `--consistency` against the
 * base's (core/server/consistency.ts asks them, at temperature 0 with a fixed seed), prompt by
 * prompt: how many differ and where the first one does. Shown beside the speed verdict on every
 * surface: a server that got faster by answering differently is named. Pure.
 */
import type { ResultDocument } from "../schema/v1.ts";

export interface ConsistencyDiff {
  /** Prompts both sides answered. */
  compared: number;
  /** Of them, answered differently by the head. */
  differ: number;
  /** The first that differs: its prompt, the character where the answers part, and both from there. */
  first: { prompt: number; at_char: number | null; base: string | null; head: string | null } | null;
}

type Answers = NonNullable<ResultDocument["consistency"]>;

/** The base's answers (its newest run's) against the head's; null when either side did not ask. */
export function consistencyDiff(
  base: Answers | null | undefined,
  head: Answers | null | undefined,
): ConsistencyDiff | null {
  if (!base || !head || base.max_tokens !== head.max_tokens) return null;
  const byPrompt = new Map(base.outputs.map((o) => [o.prompt, o]));
  let compared = 0;
  let differ = 0;
  let first: ConsistencyDiff["first"] = null;
  for (const h of head.outputs) {
    const b = byPrompt.get(h.prompt);
    if (!b || b.sha256 === null || h.sha256 === null) continue;
    compared++;
    if (b.sha256 === h.sha256) continue;
    differ++;
    if (first !== null) continue;
    const bt = b.text ?? "";
    const ht = h.text ?? "";
    let i = 0;
    while (i < bt.length && i < ht.length && bt[i] === ht[i]) i++;
    // Past the kept characters the texts agree as far as they are kept: the place is not known.
    const known = i < bt.length || i < ht.length;
    first = {
      prompt: h.prompt,
      at_char: known ? i : null,
      base: known ? bt.slice(i, i + 40) : null,
      head: known ? ht.slice(i, i + 40) : null,
    };
  }
  return { compared, differ, first };
}
