/**
 * `--agent-sessions`: the closed loop of agents. Each of the level's users plays one session of
 * the file at a time (in a seeded order), as an agent runs: each call sends the whole context so
 * far (system prompt, every earlier input and every answer of the server, verbatim), waits the
 * tool's time between calls, forks subagents that run at once with contexts of their own and
 * joins their final answers into the parent's next input. A session is one job: its calls carry
 * the job's id (`session`), their order in it (`turn`) and the job's size (`job_calls`).
 */
import { performance } from "node:perf_hooks";
import { setImmediate as yieldImmediate } from "node:timers/promises";
import type { PromptCalibration, RequestRecord } from "../../schema/v1.ts";
import type { RequestSpec } from "../client/request-body.ts";
import type { StreamClient } from "../client/stream-client.ts";
import { type AgentSession, type AgentSessions, callsOf } from "../workload/agent-sessions.ts";
import type { ChatMessage } from "../workload/dataset.ts";
import { keyedWords, promptWords, uniqueTag } from "../workload/prompts.ts";
import { type ToolWait, toolWaitMs } from "../workload/tool-waits.ts";
import type { LevelPlan } from "./level-plan.ts";
import { type LevelRun, sleepUntil } from "./loops.ts";
import { datasetOrder, type IdScheme } from "./requests.ts";
import { closedIndex, type Placement } from "./shard.ts";

export interface AgentLoopOptions {
  concurrency: number;
  requests: number | null;
  durationS: number | null;
  startAtAbsMs?: number;
  stop?: AbortSignal;
  onRecord?: (r: RequestRecord) => void;
}

/** How one placement's agent calls are numbered and written. */
export interface AgentWriter {
  plan: LevelPlan;
  ids: IdScheme;
  calibration: PromptCalibration | null;
  placement: Placement;
  agents: AgentSessions;
  /** `--tool-wait`: the file's waits, or draws from a distribution seeded by `seed`. */
  toolWait: ToolWait;
  seed: number;
}

/** Words for `tokens` of a context's part: the calibration's rate (a part has no template of its own). */
const wordsOf = (cal: PromptCalibration | null, tokens: number) =>
  Math.max(1, Math.round(cal ? tokens / cal.tokens_per_word : tokens));

/** A 32-bit seed from a job and a part of it. */
const seedOf = (job: number, part: number, salt: number) =>
  (Math.imul(job ^ 0x9e3779b1, 0x85ebca6b) + Math.imul(part + 1, 0xc2b2ae35) + salt) >>> 0;

/** The separator between inputs joined into one message (a tool's result and subagents' answers). */
const JOIN = "\n\n";

interface Job {
  id: number | null;
  calls: number;
  total: number;
  contexts: number;
}

export async function runAgentLoop(
  client: StreamClient,
  w: AgentWriter,
  opts: AgentLoopOptions,
): Promise<LevelRun> {
  const { plan } = w;
  const records: RequestRecord[] = [];
  const sessions = w.agents.sessions;
  const order = datasetOrder(sessions.length, plan.seed);
  let nextCall = 0;
  let nextPlay = 0;
  if (opts.startAtAbsMs !== undefined) await sleepUntil(opts.startAtAbsMs, opts.stop);
  const deadline =
    opts.durationS !== null ? performance.now() + opts.durationS * 1000 : Number.POSITIVE_INFINITY;
  const limit = opts.requests ?? Number.POSITIVE_INFINITY;
  const over = () => nextCall >= limit || performance.now() >= deadline || opts.stop?.aborted === true;
  const idOf = (local: number): number => {
    const i = closedIndex(local, w.placement);
    return "next" in w.ids ? w.ids.next++ : w.ids.base + i;
  };
  const words = (tokens: number, seed: number) => promptWords(wordsOf(w.calibration, tokens), seed);
  /**
   * A context's system prompt. It opens with a unique tag (its job's id and its place in the
   * job), so no two plays of a session share a cached prefix, except for the part the session
   * shares with others (a fleet of the same agent), which goes first, the same words in every
   * session that shares it; within a play the whole prefix is re-sent verbatim.
   */
  const systemPrompt = (s: AgentSession, job: number, context: number): string => {
    const tag = uniqueTag(job * 1000 + context, plan.salt);
    const { text, tokens, shared } = s.system;
    const own = (n: number) => (n > 0 ? ` ${words(n, seedOf(job, -context - 1, plan.salt))}` : "");
    if (shared.length === 0) return `${tag}${text !== null ? `\n${text}` : own(tokens)}`;
    const lead = shared.map((b) => b.text ?? keyedWords(wordsOf(w.calibration, b.tokens), b.key, plan.salt));
    return `${lead.join(" ")}\n${tag}${own(tokens - shared.reduce((a, b) => a + b.tokens, 0))}`;
  };

  /** One context (the session's or a subagent's): its final answer, or null when it was cut or failed. */
  const play = async (s: AgentSession, job: Job): Promise<string | null> => {
    const context = job.contexts++;
    let system: ChatMessage | null = null;
    let messages: ChatMessage[] = [];
    let joined: string[] = [];
    let last: string | null = null;
    for (const [k, step] of s.steps.entries()) {
      if (step.kind === "subagents") {
        const answers = await Promise.all(step.agents.map((a) => play(a, job)));
        if (answers.some((a) => a === null)) return null;
        joined = answers as string[];
        continue;
      }
      // Each step's own key (its context and its place there), never the order calls were sent
      // in: subagents' calls interleave as timing has it, their text and waits stay the same.
      const key = context * 1000 + k;
      // a context's first call waits only what the file says; later ones a tool's run
      const waitMs =
        job.id === null || system === null
          ? step.waitMs
          : toolWaitMs(w.toolWait, step.waitMs, w.seed, job.id, key);
      if (waitMs > 0) await sleepUntil(performance.now() + waitMs, opts.stop);
      if (over()) return null;
      const id = idOf(nextCall++);
      job.id ??= id;
      const turn = ++job.calls;
      system ??= { role: "system", content: systemPrompt(s, job.id, context) };
      const parts: string[] = [];
      if (step.compactTokens !== null) {
        messages = [];
        parts.push(words(step.compactTokens, seedOf(job.id, key * 2, plan.salt)));
      }
      parts.push(...joined);
      joined = [];
      if (step.add !== null)
        parts.push(step.add.text ?? words(step.add.tokens, seedOf(job.id, key * 2 + 1, plan.salt)));
      messages.push({ role: "user", content: parts.join(JOIN) });
      const spec: RequestSpec = {
        id,
        level: plan.level,
        warmup: false,
        prompt: messages[messages.length - 1]!.content,
        messages: [system, ...messages],
        maxTokens: step.outputTokens,
        promptTokensRequested: null,
        intendedSendAbsMs: null,
        session: job.id,
        turn,
        jobCalls: job.total,
        keepText: true,
        ...(waitMs > 0 ? { toolWaitMs: waitMs } : {}),
      };
      const rec = await client.stream(spec);
      records.push(rec);
      opts.onRecord?.(rec);
      if (rec.error !== null || spec.responseText === undefined) return null;
      last = spec.responseText;
      messages.push({ role: "assistant", content: last });
      // one macrotask, so undici returns the connection to its pool before the next call
      await yieldImmediate();
    }
    return last;
  };

  const user = async () => {
    while (!over()) {
      const s = sessions[order[closedIndex(nextPlay++, w.placement) % sessions.length]!]!;
      await play(s, { id: null, calls: 0, total: callsOf(s), contexts: 0 });
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, user));
  return { records, droppedArrivals: 0, drainTimeS: null };
}
