/**
 * The requests of a level, built deterministically from the seed: prompt (a dataset's, a trace's,
 * or synthetic words sized by the calibration, after any shared prefix), output length and id,
 * and a conversation's later turns with their history.
 */
import type { PromptCalibration, SweepConfig } from "../../schema/v1.ts";
import { rng } from "../../shared/random.ts";
import type { RequestSpec } from "../client/stream-client.ts";
import { type Dataset, sharedSystemPrompts, taggedEntry } from "../workload/dataset.ts";
import { makePrompt, promptWords, shapeFor, uniqueTag, wordsFor } from "../workload/prompts.ts";
import type { LevelPlan } from "./level-plan.ts";
import type { SpecFactory, TurnContext } from "./loops.ts";
import { WARMUP_ID_OFFSET } from "./shard.ts";

/** The order prompts are used in: a Fisher-Yates shuffle seeded by the run's seed. */
export function datasetOrder(n: number, seed: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  const r = rng(seed >>> 0);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * How a level's requests are numbered: from a level's own base (its index in the level, warmups
 * after WARMUP_ID_OFFSET: shards on threads or runners build exactly the requests a single process
 * would, and their ids never collide), or in the order they are built, continuing the run's count
 * (one thread of one runner: ids 0, 1, 2, ... across the run).
 */
export type IdScheme = { base: number } | { next: number };

/**
 * The level's requests: numbered by `ids`, prompts seeded per level and request, and sized by the
 * prompt calibration when there is one (else one word per token).
 */
export function specFactory(
  cfg: SweepConfig,
  plan: LevelPlan,
  ids: IdScheme,
  calibration: PromptCalibration | null = null,
  dataset: Dataset | null = null,
): SpecFactory {
  const order = dataset ? orderOf(dataset, cfg.seed) : null;
  const idOf =
    "next" in ids
      ? () => ids.next++
      : (i: number, warmup: boolean) => ids.base + (warmup ? WARMUP_ID_OFFSET : 0) + i;
  return (i, warmup, intended, turn) => {
    const id = idOf(i, warmup);
    const spec = buildSpec(cfg, plan, id, i, warmup, intended, calibration, dataset, order, turn);
    if (cfg.cancel && !warmup && cancelled(id, cfg.seed, cfg.cancel.share))
      spec.cancelAfterTokens = cfg.cancel.after_tokens;
    return spec;
  };
}

/** `--cancel-share`: whether request `id` is one the client aborts (a seeded hash of its id). */
export function cancelled(id: number, seed: number, share: number): boolean {
  const h = Math.imul(id ^ Math.imul(seed, 0x9e3779b1), 0x85ebca6b) ^ (id >>> 13);
  return (Math.imul(h ^ (h >>> 16), 0xc2b2ae35) >>> 0) / 2 ** 32 < share;
}

/** A dataset's prompts in a seeded shuffle; a trace's in its own (time) order. */
function orderOf(dataset: Dataset, seed: number): number[] {
  return dataset.offsetsMs ? dataset.entries.map((_, i) => i) : datasetOrder(dataset.entries.length, seed);
}

/**
 * `--shared-prefix-tokens N --prefix-groups G`: request i belongs to group i mod G, whose prompts
 * all begin with the same N-token text (a system prompt), before the request's unique part.
 */
export function sharedPrefix(
  cfg: SweepConfig,
  index: number,
  calibration: PromptCalibration | null,
  salt = 0,
): string {
  const sp = cfg.shared_prefix;
  if (!sp) return "";
  const group = index % sp.groups;
  const words = calibration ? Math.max(1, Math.round(sp.tokens / calibration.tokens_per_word)) : sp.tokens;
  return `group${String(group).padStart(4, "0")} ${promptWords(Math.max(1, words - 1), (cfg.seed * 7919 + group + 1 + salt * 1_000_003) >>> 0)}\n`;
}

function buildSpec(
  cfg: SweepConfig,
  plan: LevelPlan,
  id: number,
  i: number,
  warmup: boolean,
  intended: number | null,
  calibration: PromptCalibration | null,
  dataset: Dataset | null = null,
  order: number[] | null = null,
  turn?: TurnContext,
): RequestSpec {
  if (dataset && order) {
    // A dataset is consumed across levels in its seeded order: the level's i-th request draws
    // entry (datasetStart + i); once every entry was sent, a draw is a reuse, and a reuse (unless
    // --dataset-reuse exact) and every warmup (copies from the order's end) get a unique tag at
    // their start, so the cache never serves a prompt the measured workload did not itself repeat;
    // a reuse keeps in front a system prompt other lines open with too (the dataset's own sharing).
    const n = order.length;
    const draw = plan.datasetStart + i;
    const reused = !warmup && draw >= n;
    const exact = cfg.dataset_reuse === "exact";
    const drawn = dataset.entries[order[warmup ? n - 1 - (i % n) : draw % n]!]!;
    const system = drawn.messages?.[0]?.role === "system" ? drawn.messages[0].content : null;
    const keepSystem = !warmup && system !== null && sharedSystemPrompts(dataset).has(system);
    const entry =
      warmup || (reused && !exact)
        ? taggedEntry(drawn, uniqueTag(id + cfg.seed * 1_000_003, plan.salt), keepSystem)
        : drawn;
    const spec: RequestSpec = {
      id,
      level: plan.level,
      warmup,
      prompt: entry.prompt ?? "",
      ...(entry.messages ? { messages: entry.messages } : {}),
      maxTokens: entry.outputTokens ?? cfg.max_tokens,
      promptTokensRequested: entry.promptTokens ?? null,
      intendedSendAbsMs: intended,
      ...(reused ? { promptReuse: exact ? ("exact" as const) : ("tagged" as const) } : {}),
    };
    // In a conversation, the entry is the next user turn (a messages entry: its last user message).
    return turn ? inConversation(spec, turn, entry.prompt ?? lastUserContent(entry.messages ?? [])) : spec;
  }
  const fixed = { promptTokens: cfg.prompt_tokens, maxTokens: cfg.max_tokens };
  const shape = shapeFor(cfg.prompts, warmup ? 1_000_000 + i : i, plan.seed, fixed);
  const spec: RequestSpec = {
    id,
    level: plan.level,
    warmup,
    // Every prompt: a unique fixed-width tag first, then the run's words (one sequence per
    // seed), so prompts of one length count the same tokens and share no prefix beyond the
    // server's own template. A later turn of a conversation has no shared prefix of its own:
    // the history before it is one.
    prompt:
      // (a warmup neither: it must not warm a group's prefix before the group's first request)
      (warmup || (turn && turn.turn > 1) ? "" : sharedPrefix(cfg, i, calibration, plan.salt)) +
      makePrompt(
        calibration ? wordsFor(calibration, shape.promptTokens) : shape.promptTokens,
        cfg.seed,
        id + cfg.seed * 1_000_003,
        plan.salt,
      ),
    maxTokens: shape.maxTokens,
    promptTokensRequested: shape.promptTokens,
    intendedSendAbsMs: intended,
  };
  return turn ? inConversation(spec, turn, spec.prompt) : spec;
}

const lastUserContent = (ms: readonly { role: string; content: string }[]) =>
  [...ms].reverse().find((m) => m.role === "user")?.content ?? ms[ms.length - 1]?.content ?? "";

/**
 * Turn `turn.turn` of a conversation (`--turns`): the history (earlier user turns and the
 * server's answers) then the new user message; the session is the id of its first turn. The
 * client keeps the answer's text for the next turn's history.
 */
function inConversation(spec: RequestSpec, turn: TurnContext, userContent: string): RequestSpec {
  return {
    ...spec,
    prompt: userContent,
    messages: [...turn.history, { role: "user", content: userContent }],
    session: turn.turn === 1 ? spec.id : turn.session,
    turn: turn.turn,
    keepText: true,
    ...(turn.previousResponseId !== undefined ? { previousResponseId: turn.previousResponseId } : {}),
    // only the new turn was sized: the history is whatever the conversation holds by now
    promptTokensRequested: turn.turn === 1 ? spec.promptTokensRequested : null,
  };
}
