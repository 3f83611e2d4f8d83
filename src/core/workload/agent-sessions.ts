/**
 * `--agent-sessions FILE`: agents' sessions to replay. A session is a sequence of model calls
 * whose context grows by each answer (the server's own, re-sent verbatim) and by what comes
 * between calls: the user's turn or a tool's result, after the tool's wait; subagents fork from
 * it with contexts of their own and join back, their final answers the parent's next input; a
 * compaction replaces the context by a summary. Two formats, told apart by their shape:
 * tokenbench's own JSON Lines (one session per line, docs/agent-sessions.md) and the Weka
 * KV-cache-tester trace (one conversation per JSON object: `requests` of `n`/`s` calls and
 * `subagent` markers), the format of the public agentic-coding corpora AIPerf and InferenceX's
 * AgentX replay.
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { TokenbenchError } from "../../schema/errors.ts";
import type { SweepConfig } from "../../schema/v1.ts";
import type { AgentCall, AgentSession, AgentSessions, AgentStep, SharedBlock } from "./agent-types.ts";
import { type Dataset, readWorkloadFile, withoutBom } from "./dataset.ts";

export type { AgentCall, AgentSession, AgentSessions, AgentStep, SharedBlock } from "./agent-types.ts";

export class AgentSessionsError extends TokenbenchError {
  constructor(message: string) {
    super("agent_sessions_invalid", message);
  }
}

/** Subagents of subagents: deeper than this is a loop in the file, not an agent. */
const MAX_DEPTH = 8;

/** The calls a session makes in all, its subagents' included. */
export function callsOf(s: AgentSession): number {
  return s.steps.reduce(
    (a, st) => a + (st.kind === "call" ? 1 : st.agents.reduce((b, x) => b + callsOf(x), 0)),
    0,
  );
}

/** The most tokens one call of a session sends and asks for (its context at its longest, estimated). */
export function longestContext(s: AgentSession): { promptTokens: number; outputTokens: number } {
  let context = s.system.tokens;
  let best = { promptTokens: 0, outputTokens: 1 };
  let joined = 0;
  for (const st of s.steps) {
    if (st.kind === "subagents") {
      for (const a of st.agents) {
        const l = longestContext(a);
        if (l.promptTokens + l.outputTokens > best.promptTokens + best.outputTokens) best = l;
        joined += finalAnswerTokens(a);
      }
      continue;
    }
    if (st.compactTokens !== null) context = s.system.tokens + st.compactTokens;
    context += (st.add?.tokens ?? 0) + joined;
    joined = 0;
    if (context + st.outputTokens > best.promptTokens + best.outputTokens)
      best = { promptTokens: context, outputTokens: st.outputTokens };
    context += st.outputTokens;
  }
  return best;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
const posInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0;
const nonNeg = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/** A text or a size: `key` (a non-empty string) or `key_tokens` (a positive integer), or neither. */
function sized(
  o: Record<string, unknown>,
  key: string,
  where: string,
): { text: string | null; tokens: number } | null {
  const text = o[key];
  const tokens = o[`${key}_tokens`];
  if (text !== undefined && tokens !== undefined)
    throw new AgentSessionsError(`${where}: "${key}" or "${key}_tokens", not both`);
  if (text !== undefined) {
    if (typeof text !== "string" || text === "")
      throw new AgentSessionsError(`${where}: "${key}" must be a non-empty string`);
    // a text's size is the server's count; this estimate (4 characters a token) only checks the context
    return { text, tokens: Math.max(1, Math.round(text.length / 4)) };
  }
  if (tokens !== undefined) {
    if (!posInt(tokens)) throw new AgentSessionsError(`${where}: "${key}_tokens" must be a positive integer`);
    return { text: null, tokens };
  }
  return null;
}

function nativeSession(o: unknown, where: string, depth: number, fallbackId: string): AgentSession {
  if (!isObj(o)) throw new AgentSessionsError(`${where}: not a JSON object`);
  if (depth > MAX_DEPTH) throw new AgentSessionsError(`${where}: subagents nested deeper than ${MAX_DEPTH}`);
  const id = o.id === undefined ? fallbackId : o.id;
  if (typeof id !== "string" || id === "")
    throw new AgentSessionsError(`${where}: "id" must be a non-empty string`);
  if (!Array.isArray(o.calls) || o.calls.length === 0)
    throw new AgentSessionsError(`${where}: "calls" must be a non-empty array`);
  const steps: AgentStep[] = o.calls.map((c, i) => {
    const at = `${where}, calls[${i}]`;
    if (!isObj(c)) throw new AgentSessionsError(`${at}: not a JSON object`);
    if (c.subagents !== undefined) {
      if (!Array.isArray(c.subagents) || c.subagents.length === 0)
        throw new AgentSessionsError(`${at}: "subagents" must be a non-empty array of sessions`);
      return {
        kind: "subagents",
        agents: c.subagents.map((a, k) =>
          nativeSession(a, `${at}.subagents[${k}]`, depth + 1, `${id}.${i}.${k}`),
        ),
      };
    }
    const user = sized(c, "user", at);
    const tool = sized(c, "tool_result", at);
    if (user && tool)
      throw new AgentSessionsError(`${at}: a call adds a user turn or a tool result, not both`);
    if (!posInt(c.output_tokens))
      throw new AgentSessionsError(`${at}: "output_tokens" must be a positive integer`);
    const wait = c.tool_wait_ms ?? 0;
    if (!nonNeg(wait) || wait > 3_600_000)
      throw new AgentSessionsError(`${at}: "tool_wait_ms" must be milliseconds from 0 to 3600000`);
    if (c.compact_tokens !== undefined && !posInt(c.compact_tokens))
      throw new AgentSessionsError(`${at}: "compact_tokens" must be a positive integer`);
    return {
      kind: "call",
      add: user ? { role: "user", ...user } : tool ? { role: "tool", ...tool } : null,
      waitMs: wait,
      compactTokens: (c.compact_tokens as number | undefined) ?? null,
      outputTokens: c.output_tokens,
    };
  });
  checkOrder(steps, where);
  const system = sized(o, "system", where) ?? { text: null, tokens: 0 };
  if (o.shared_system !== undefined && typeof o.shared_system !== "boolean")
    throw new AgentSessionsError(`${where}: "shared_system" must be true or false`);
  if (o.shared_system === true && system.tokens === 0)
    throw new AgentSessionsError(`${where}: "shared_system" needs a "system" or "system_tokens" to share`);
  // sessions with the same system prompt (its text, or its size) send the same words
  const shared =
    o.shared_system === true ? [{ key: system.text ?? `system:${system.tokens}`, ...system }] : [];
  return { id, system: { ...system, shared }, steps };
}

/** A session opens with a call that adds something; every call adds something or joins subagents; subagents are joined. */
function checkOrder(steps: AgentStep[], where: string): void {
  const first = steps[0]!;
  if (first.kind !== "call" || first.add === null)
    throw new AgentSessionsError(
      `${where}: the first call must add a user turn or a tool result ("user", "user_tokens", "tool_result" or "tool_result_tokens")`,
    );
  for (const [i, st] of steps.entries()) {
    const before = steps[i - 1];
    if (st.kind === "subagents" && steps[i + 1]?.kind !== "call")
      throw new AgentSessionsError(
        `${where}, calls[${i}]: subagents must be followed by a call of the parent (it joins their answers)`,
      );
    if (st.kind === "call" && st.add === null && before?.kind !== "subagents" && st.compactTokens === null)
      throw new AgentSessionsError(
        `${where}, calls[${i}]: a call adds a user turn or a tool result, unless it joins subagents or follows a compaction`,
      );
  }
}

/** Seconds in the Weka trace (`t`, `think_time`); ms here. */
const S_TO_MS = 1000;

/**
 * One Weka trace as a session. Sizes only (the format keeps no text): a call's new input is what
 * its `in` has beyond the previous call's context and answer; where its `hash_ids` leave the
 * previous call's before their end, the context was rewritten (compaction) and keeps the blocks
 * in common. The wait before a call is its `think_time` (the client's own delay), never the gap
 * between recorded timestamps, which holds the recorded server's time. Consecutive subagent
 * markers fork together; the parent's next call joins them.
 */
function wekaSession(o: unknown, where: string, depth: number, fallbackId: string): AgentSession {
  if (!isObj(o)) throw new AgentSessionsError(`${where}: not a JSON object`);
  if (depth > MAX_DEPTH) throw new AgentSessionsError(`${where}: subagents nested deeper than ${MAX_DEPTH}`);
  const id =
    typeof o.id === "string" && o.id !== "" ? o.id : typeof o.agent_id === "string" ? o.agent_id : fallbackId;
  const block = o.block_size === undefined ? 0 : o.block_size;
  if (!nonNeg(block)) throw new AgentSessionsError(`${where}: "block_size" must be a non-negative integer`);
  if (!Array.isArray(o.requests) || o.requests.length === 0)
    throw new AgentSessionsError(`${where}: "requests" must be a non-empty array`);
  const systemTokens =
    (nonNeg(o.system_tokens) ? o.system_tokens : 0) + (nonNeg(o.tool_tokens) ? o.tool_tokens : 0);
  const scope = o.hash_id_scope ?? "local";
  if (scope !== "local" && scope !== "global")
    throw new AgentSessionsError(`${where}: "hash_id_scope" must be "local" or "global"`);
  const steps: AgentStep[] = [];
  let context = 0;
  let prevHashes: number[] = [];
  let shared: SharedBlock[] = [];
  for (const [i, r] of o.requests.entries()) {
    const at = `${where}, requests[${i}]`;
    if (!isObj(r)) throw new AgentSessionsError(`${at}: not a JSON object`);
    if (r.type === "subagent") {
      const sub = wekaSession(
        { ...r, block_size: r.block_size ?? block, hash_id_scope: r.hash_id_scope ?? scope },
        at,
        depth + 1,
        `${id}.${i}`,
      );
      const last = steps[steps.length - 1];
      if (last?.kind === "subagents") last.agents.push(sub);
      else if (steps.length > 0) steps.push({ kind: "subagents", agents: [sub] });
      // a subagent before the parent's first call has nothing to fork from (AIPerf drops it too)
      continue;
    }
    if (r.type !== "n" && r.type !== "s")
      throw new AgentSessionsError(`${at}: "type" must be "n", "s" or "subagent"`);
    if (!posInt(r.in) || !posInt(r.out))
      throw new AgentSessionsError(`${at}: "in" and "out" must be positive integers (tokens)`);
    const hashes = Array.isArray(r.hash_ids) ? (r.hash_ids as unknown[]).filter(nonNeg) : [];
    const think = r.think_time === undefined || r.think_time === null ? 0 : r.think_time;
    if (!nonNeg(think)) throw new AgentSessionsError(`${at}: "think_time" must be non-negative seconds`);
    let common = 0;
    while (common < hashes.length && common < prevHashes.length && hashes[common] === prevHashes[common])
      common++;
    // the previous call's last block may be partial, so leaving it is growth, not a rewrite
    const rewritten =
      steps.length > 0 && prevHashes.length > 0 && hashes.length > 0 && common < prevHashes.length - 1;
    // hash ids of the global scope name the same blocks in every trace: the system prompt's whole
    // blocks, the part a fleet of the same agent shares, lead the context as those blocks' words
    if (steps.length === 0 && scope === "global" && block > 0)
      shared = hashes
        .slice(0, Math.floor(systemTokens / block))
        .map((h) => ({ key: `block:${block}:${h}`, text: null, tokens: block }));
    let add = r.in - context;
    let compactTokens: number | null = null;
    if (steps.length === 0) add = r.in - systemTokens;
    else if (rewritten || add < 1) {
      compactTokens = Math.max(1, Math.min(r.in - systemTokens - 1, common * block - systemTokens));
      add = r.in - systemTokens - compactTokens;
    }
    // after a fork, the subagents' final answers are part of the new input (the join sends them)
    const before = steps[steps.length - 1];
    if (before?.kind === "subagents") add -= before.agents.reduce((a, x) => a + finalAnswerTokens(x), 0);
    steps.push({
      kind: "call",
      add: add >= 1 ? { role: steps.length === 0 ? "user" : "tool", text: null, tokens: add } : null,
      waitMs: steps.length === 0 ? 0 : think * S_TO_MS,
      compactTokens,
      outputTokens: r.out,
    });
    context = r.in + r.out;
    prevHashes = hashes;
  }
  // a fork no call of the parent follows ran in the background; it is joined at the end here
  if (steps[steps.length - 1]?.kind === "subagents") steps.push(joinCall());
  if (steps.length === 0) throw new AgentSessionsError(`${where}: no call of the parent agent`);
  const first = steps[0] as AgentCall;
  if (first.add === null) first.add = { role: "user", text: null, tokens: 1 };
  return { id, system: { text: null, tokens: Math.max(0, systemTokens), shared }, steps };
}

/** The tokens a session's last call asks for: its final answer, as the parent's join receives it. */
function finalAnswerTokens(s: AgentSession): number {
  for (let i = s.steps.length - 1; i >= 0; i--) {
    const st = s.steps[i]!;
    if (st.kind === "call") return st.outputTokens;
  }
  return 0;
}

const joinCall = (): AgentCall => ({
  kind: "call",
  add: null,
  waitMs: 0,
  compactTokens: null,
  outputTokens: 1,
});

export function parseAgentSessions(
  input: string,
  name: string,
  sha256 = createHash("sha256").update(input).digest("hex"),
): AgentSessions {
  const text = withoutBom(input).trim();
  const objects: { o: unknown; where: string }[] = [];
  const lines = text.split("\n").filter((l) => l.trim() !== "").length;
  let whole: unknown;
  try {
    whole = text.startsWith("{") ? JSON.parse(text) : undefined;
  } catch {
    whole = undefined; // JSON Lines: each line its own object
  }
  // one JSON object on one line is that line's; over several (a Weka trace as saved), the file's
  if (whole !== undefined) objects.push({ o: whole, where: text.includes("\n") ? name : `${name}:1` });
  else
    for (const [i, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue;
      try {
        objects.push({ o: JSON.parse(line), where: `${name}:${i + 1}` });
      } catch (e) {
        throw new AgentSessionsError(`${name}:${i + 1}: not JSON (${(e as Error).message})`);
      }
    }
  if (objects.length === 0) throw new AgentSessionsError(`${name}: no sessions in the file`);
  const weka = isObj(objects[0]!.o) && Array.isArray(objects[0]!.o.requests);
  const sessions = objects.map(({ o, where }, k) =>
    weka ? wekaSession(o, where, 0, `trace${k + 1}`) : nativeSession(o, where, 0, `session${k + 1}`),
  );
  return { name, lines, sha256, format: weka ? "weka" : "tokenbench", sessions };
}

export function loadAgentSessions(path: string): AgentSessions {
  const file = readWorkloadFile(path, (m) => new AgentSessionsError(m));
  return parseAgentSessions(file.text, basename(path), file.sha256);
}

/** What the configuration records of the file (its identity is the SHA-256). */
export function agentSessionsRecord(a: AgentSessions): NonNullable<SweepConfig["agent_sessions"]> {
  return {
    name: a.name,
    lines: a.lines,
    sha256: a.sha256,
    format: a.format,
    sessions: a.sessions.length,
    calls: a.sessions.reduce((n, s) => n + callsOf(s), 0),
  };
}

/** The longest call of any session (its context at its longest, estimated), checked against the server's context. */
export function agentsLongest(a: AgentSessions): { promptTokens: number; outputTokens: number } {
  return a.sessions
    .map(longestContext)
    .reduce((b, l) => (l.promptTokens + l.outputTokens > b.promptTokens + b.outputTokens ? l : b));
}

/** The sessions as the load generator takes a workload: a dataset of no entries that carries them. */
export function agentDataset(a: AgentSessions): Dataset {
  return { name: a.name, lines: a.lines, sha256: a.sha256, entries: [], agents: a };
}
