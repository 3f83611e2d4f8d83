/**
 * An agent's session as tokenbench plays it (`--agent-sessions`): calls, the tools' waits between
 * them, subagents that fork and join, compactions. Read from a file by agent-sessions.ts.
 */

export interface AgentCall {
  kind: "call";
  /** What the call adds to the context first: a user turn or a tool's result (text, or a size in tokens). */
  add: { role: "user" | "tool"; text: string | null; tokens: number } | null;
  /** The tool's run before this call, from the previous call's end (ms). */
  waitMs: number;
  /** A compaction first: the context after the system prompt becomes a summary of this many tokens. */
  compactTokens: number | null;
  outputTokens: number;
}

export interface AgentFork {
  kind: "subagents";
  agents: AgentSession[];
}

export type AgentStep = AgentCall | AgentFork;

export interface AgentSession {
  id: string;
  system: { text: string | null; tokens: number };
  steps: AgentStep[];
}

export interface AgentSessions {
  name: string;
  lines: number;
  sha256: string;
  format: "tokenbench" | "weka";
  sessions: AgentSession[];
}
