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

/**
 * A part of a system prompt other sessions send too (a fleet of the same agent: its instructions
 * and tools), the same text wherever its key recurs: a given text, or words drawn from the key.
 */
export interface SharedBlock {
  key: string;
  text: string | null;
  tokens: number;
}

export interface AgentSession {
  id: string;
  /**
   * `shared`: the leading part other sessions send too, sent before the play's unique tag so the
   * prefix cache serves it across sessions; the rest (tokens beyond it) is the play's own.
   */
  system: { text: string | null; tokens: number; shared: SharedBlock[] };
  steps: AgentStep[];
}

export interface AgentSessions {
  name: string;
  lines: number;
  sha256: string;
  format: "tokenbench" | "weka";
  sessions: AgentSession[];
}
