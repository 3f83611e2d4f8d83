/**
 * `--agent-sessions`: reading tokenbench's session lines and Weka agent traces into one shape,
 * and refusing what is not a session with the line and the field at fault.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type AgentCall,
  agentSessionsRecord,
  agentsLongest,
  callsOf,
  parseAgentSessions,
} from "../../../src/core/workload/agent-sessions.ts";

const EXAMPLE = resolve(import.meta.dirname, "../../../examples/agent-sessions.jsonl");
const line = (o: unknown) => `${JSON.stringify(o)}\n`;
const refused = (text: string) => {
  try {
    parseAgentSessions(text, "f.jsonl");
  } catch (e) {
    return { code: (e as { code?: string }).code, message: (e as Error).message };
  }
  return null;
};

describe("tokenbench's session lines", () => {
  it("the example: calls, waits, subagents and a compaction, counted with the subagents' calls", () => {
    const a = parseAgentSessions(readFileSync(EXAMPLE, "utf8"), "agent-sessions.jsonl");
    expect(a.format).toBe("tokenbench");
    expect(a.sessions.map((s) => s.id)).toEqual(["fix-a-bug", "long-edit"]);
    const [bug, edit] = a.sessions;
    expect(bug!.steps.map((s) => s.kind)).toEqual(["call", "call", "subagents", "call", "call"]);
    const fork = bug!.steps[2]!;
    expect(fork.kind === "subagents" && fork.agents.map((x) => x.id)).toEqual(["explore", "tests"]);
    expect(callsOf(bug!)).toBe(4 + 3);
    expect(callsOf(edit!)).toBe(5);
    const second = bug!.steps[1] as AgentCall;
    expect(second).toMatchObject({ waitMs: 120, add: { role: "tool", tokens: 300 }, outputTokens: 16 });
    expect((edit!.steps[3] as AgentCall).compactTokens).toBe(200);
    expect(agentSessionsRecord(a)).toMatchObject({ sessions: 2, calls: 12, lines: 2, format: "tokenbench" });
    // the longest call: long-edit's third, 400 + 80 + 32 + 500 + 16 + 400 tokens, 16 out
    expect(agentsLongest(a)).toEqual({ promptTokens: 400 + 80 + 32 + 500 + 16 + 400, outputTokens: 16 });
  });

  it("texts instead of sizes, and a session's id from its line when it has none", () => {
    const a = parseAgentSessions(
      line({ system: "You fix bugs.", calls: [{ user: "Fix it", output_tokens: 5 }] }),
      "f.jsonl",
    );
    expect(a.sessions[0]!.id).toBe("session1");
    expect(a.sessions[0]!.system.text).toBe("You fix bugs.");
    expect((a.sessions[0]!.steps[0] as AgentCall).add).toMatchObject({ role: "user", text: "Fix it" });
  });

  it("shared_system: the whole system prompt is shared, keyed by its text or its size; not shared by default", () => {
    const a = parseAgentSessions(
      line({ system_tokens: 400, shared_system: true, calls: [{ user_tokens: 5, output_tokens: 5 }] }) +
        line({
          system: "You fix bugs.",
          shared_system: true,
          calls: [{ user: "Fix it", output_tokens: 5 }],
        }) +
        line({ system_tokens: 400, calls: [{ user_tokens: 5, output_tokens: 5 }] }),
      "f.jsonl",
    );
    const [sized, texted, own] = a.sessions;
    expect(sized!.system.shared).toEqual([{ key: "system:400", text: null, tokens: 400 }]);
    expect(texted!.system.shared).toEqual([
      { key: "You fix bugs.", text: "You fix bugs.", tokens: texted!.system.tokens },
    ]);
    expect(own!.system.shared).toEqual([]);
  });

  it.each([
    [{ calls: [] }, /f.jsonl:1: "calls" must be a non-empty array/],
    [
      { shared_system: "yes", system_tokens: 5, calls: [{ user_tokens: 1, output_tokens: 1 }] },
      /"shared_system" must be true or false/,
    ],
    [
      { shared_system: true, calls: [{ user_tokens: 1, output_tokens: 1 }] },
      /"shared_system" needs a "system" or "system_tokens" to share/,
    ],
    [{ calls: [{ user_tokens: 5 }] }, /calls\[0\]: "output_tokens" must be a positive integer/],
    [{ calls: [{ user: "a", user_tokens: 3, output_tokens: 1 }] }, /"user" or "user_tokens", not both/],
    [{ calls: [{ output_tokens: 4 }] }, /the first call must add a user turn or a tool result/],
    [
      { calls: [{ user_tokens: 1, output_tokens: 1 }, { output_tokens: 4 }] },
      /calls\[1\]: a call adds a user turn or a tool result, unless it joins subagents/,
    ],
    [
      {
        calls: [
          { user_tokens: 1, output_tokens: 1 },
          { subagents: [{ calls: [{ user_tokens: 1, output_tokens: 1 }] }] },
        ],
      },
      /calls\[1\]: subagents must be followed by a call of the parent/,
    ],
    [
      { calls: [{ user_tokens: 1, output_tokens: 1, tool_wait_ms: -1 }] },
      /"tool_wait_ms" must be milliseconds/,
    ],
  ])("refuses %j, naming the line and the field", (o, why) => {
    const r = refused(line(o));
    expect(r?.code).toBe("agent_sessions_invalid");
    expect(r?.message).toMatch(why);
  });

  it("refuses a line that is not JSON, and a file with no session", () => {
    expect(refused(`${line({ calls: [{ user_tokens: 1, output_tokens: 1 }] })}{nope\n`)?.message).toMatch(
      /f.jsonl:2: not JSON/,
    );
    expect(refused("\n\n")?.message).toMatch(/no sessions in the file/);
  });
});

describe("Weka agent traces (kv-cache-tester; AIPerf's and AgentX's corpora)", () => {
  const req = (o: Record<string, unknown>) => ({ type: "s", model: "m", ...o });
  const trace = {
    id: "t1",
    models: ["m"],
    block_size: 64,
    hash_id_scope: "local",
    system_tokens: 100,
    tool_tokens: 28,
    requests: [
      req({ t: 0, in: 200, out: 20, hash_ids: [1, 2, 3, 4] }),
      req({ t: 3, in: 300, out: 10, hash_ids: [1, 2, 3, 4, 5], think_time: 0.25 }),
      {
        t: 4,
        type: "subagent",
        agent_id: "a1",
        subagent_type: "Explore",
        status: "completed",
        models: ["m"],
        system_tokens: 50,
        requests: [req({ t: 4, in: 80, out: 8, hash_ids: [9, 10] }), req({ t: 5, in: 120, out: 8 })],
      },
      req({ t: 9, in: 340, out: 12, hash_ids: [1, 2, 3, 4, 5, 6] }),
      // rewritten after block 2: a compaction keeping 2 blocks (128 tokens, the system's 128 of them)
      req({ t: 12, in: 260, out: 12, hash_ids: [1, 2, 77, 78, 79], think_time: 1.5 }),
    ],
  };

  it("sizes become calls: growth beyond the last context (less the subagents' answers the join brings) is the new input, think_time the wait, a rewrite a compaction", () => {
    const a = parseAgentSessions(JSON.stringify(trace), "trace_0001.json");
    expect(a.format).toBe("weka");
    const s = a.sessions[0]!;
    expect(s.id).toBe("t1");
    expect(s.system.tokens).toBe(128);
    const calls = s.steps.filter((x): x is AgentCall => x.kind === "call");
    expect(calls.map((c) => c.add?.tokens ?? null)).toEqual([
      200 - 128,
      300 - 220,
      340 - 310 - 8,
      260 - 128 - 1,
    ]);
    expect(calls.map((c) => c.waitMs)).toEqual([0, 250, 0, 1500]);
    expect(calls.map((c) => c.compactTokens)).toEqual([null, null, null, 1]);
    expect(calls.map((c) => c.outputTokens)).toEqual([20, 10, 12, 12]);
    const fork = s.steps[2]!;
    expect(fork.kind).toBe("subagents");
    if (fork.kind === "subagents") {
      expect(fork.agents[0]!.id).toBe("a1");
      expect(fork.agents[0]!.system.tokens).toBe(50);
      expect(callsOf(fork.agents[0]!)).toBe(2);
    }
    expect(callsOf(s)).toBe(6);
  });

  it("a compaction keeps the blocks in common beyond the system prompt", () => {
    const t = {
      ...trace,
      system_tokens: 10,
      tool_tokens: 0,
      requests: [
        req({ t: 0, in: 400, out: 20, hash_ids: [1, 2, 3, 4, 5, 6, 7] }),
        req({ t: 1, in: 300, out: 20, hash_ids: [1, 2, 3, 9, 9] }),
      ],
    };
    const calls = parseAgentSessions(JSON.stringify(t), "t.json").sessions[0]!.steps as AgentCall[];
    expect(calls[1]!.compactTokens).toBe(3 * 64 - 10);
    expect(calls[1]!.add?.tokens).toBe(300 - 10 - (3 * 64 - 10));
  });

  it("hash_id_scope global: the system prompt's whole blocks are shared by their hash ids (subagents inherit the scope); local shares nothing", () => {
    const global = { ...trace, hash_id_scope: "global" };
    const s = parseAgentSessions(JSON.stringify(global), "g.json").sessions[0]!;
    // 128 system tokens in 64-token blocks: the first call's first two blocks
    expect(s.system.shared).toEqual([
      { key: "block:64:1", text: null, tokens: 64 },
      { key: "block:64:2", text: null, tokens: 64 },
    ]);
    const fork = s.steps[2]!;
    // the subagent's 50 system tokens hold no whole block: nothing of it is shared
    expect(fork.kind === "subagents" && fork.agents[0]!.system.shared).toEqual([]);
    const wide = { ...global, requests: [{ ...global.requests[2], system_tokens: 130 }] };
    const sub = parseAgentSessions(
      JSON.stringify({ ...global, requests: [global.requests[0], wide.requests[0]] }),
      "g.json",
    ).sessions[0]!.steps[1]!;
    expect(sub.kind === "subagents" && sub.agents[0]!.system.shared.map((b) => b.key)).toEqual([
      "block:64:9",
      "block:64:10",
    ]);
    expect(parseAgentSessions(JSON.stringify(trace), "l.json").sessions[0]!.system.shared).toEqual([]);
    expect(refused(JSON.stringify({ ...trace, hash_id_scope: "world" }))?.message).toMatch(
      /"hash_id_scope" must be "local" or "global"/,
    );
  });

  it("one trace per line is read as JSON Lines; a bad request names its place", () => {
    const two = `${JSON.stringify(trace)}\n${JSON.stringify({ ...trace, id: "t2" })}\n`;
    expect(parseAgentSessions(two, "traces.jsonl").sessions.map((s) => s.id)).toEqual(["t1", "t2"]);
    const bad = { ...trace, requests: [req({ t: 0, in: 0, out: 5 })] };
    expect(refused(JSON.stringify(bad))?.message).toMatch(
      /requests\[0\]: "in" and "out" must be positive integers/,
    );
  });
});
