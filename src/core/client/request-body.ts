/**
 * The body of one measured request: the API's own shape (server/target.ts), greedy decoding, the
 * Responses API's chain, ignore_eos, tools, then the user's extra body and the request's own.
 */
import { generationBody, type ResolvedTarget } from "../server/target.ts";
import { type ToolSettings, toolsBody } from "./tool-calls.ts";

/** One measured request as the load generator asks for it. */
export interface RequestSpec {
  id: number;
  level: number;
  warmup: boolean;
  prompt: string;
  maxTokens: number;
  promptTokensRequested: number | null;
  /** Absolute performance.now() time the arrival process intended, or null (closed loop). */
  intendedSendAbsMs: number | null;
  /** Per-request body overrides (profile runs). */
  bodyOverrides?: Record<string, unknown>;
  /** Chat messages from a dataset, sent instead of one user message with `prompt`. */
  messages?: { role: string; content: string }[];
  /** The serialized body, built ahead of time (open loop: no work at send time). */
  body?: string;
  /** `--turns`: the conversation (id of its first turn) and this request's turn in it. */
  session?: number;
  turn?: number;
  /** `--agent-sessions`: the calls the job's session makes in all. */
  jobCalls?: number;
  /** `--agent-sessions`: the tool's run the call waited before it was sent, ms. */
  toolWaitMs?: number;
  /** Keep the answer's text in `responseText` (a conversation's next turn re-sends it). */
  keepText?: boolean;
  /** The answer's content text, set when the stream ends (with `keepText`). */
  responseText?: string;
  /** Responses API: the id of this response (set when the stream ends, with `keepText`). */
  responseId?: string;
  /** Responses API, `--responses-chain`: the previous turn's response id. */
  previousResponseId?: string;
  /** A dataset entry drawn again after every entry was sent: with a unique tag, or exactly. */
  promptReuse?: "tagged" | "exact";
  /** `--cancel-share`: the client aborts the stream after this many content events. */
  cancelAfterTokens?: number;
}

/** What of the client's configuration a body depends on. */
export interface BodySettings {
  target: ResolvedTarget;
  ignoreEos: boolean;
  extraBody: Record<string, unknown>;
  tools?: ToolSettings | null;
  responsesChain?: boolean;
}

export function buildRequestBody(cfg: BodySettings, spec: RequestSpec): Record<string, unknown> {
  const api = cfg.target.api;
  const chained = api === "responses" && cfg.responsesChain === true && spec.previousResponseId !== undefined;
  const messages = chained && spec.messages ? spec.messages.slice(-1) : spec.messages;
  const body = generationBody(
    api,
    cfg.target.model,
    messages ? { prompt: spec.prompt, messages } : { prompt: spec.prompt },
    spec.maxTokens,
    true,
  );
  body.temperature = 0;
  if (api === "responses" && cfg.responsesChain === true) {
    // the server keeps each response so the next turn can name it instead of re-sending it
    body.store = true;
    if (chained) body.previous_response_id = spec.previousResponseId;
  }
  if (cfg.ignoreEos) body.ignore_eos = true;
  if (cfg.tools) Object.assign(body, toolsBody(api, cfg.tools));
  Object.assign(body, cfg.extraBody, spec.bodyOverrides ?? {});
  return body;
}
