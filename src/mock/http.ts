/** HTTP plumbing of the mock: JSON answers, OpenAI-style errors, request bodies, prompts (the Messages API's too). */
import type { IncomingMessage, ServerResponse } from "node:http";
import { tokenize } from "./tokenizer.ts";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = "invalid_request_error",
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(s) });
  res.end(s);
}

export function sendError(res: ServerResponse, status: number, message: string, type: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: status } });
}

/** The prompt's tokens (mock tokenizer), from chat messages or a completions prompt. */
export function promptOf(body: Record<string, unknown>, chat: boolean): string[] {
  if (chat) {
    const msgs = body.messages;
    if (!Array.isArray(msgs) || msgs.length === 0)
      throw new HttpError(400, "'messages' must be a non-empty array");
    const parts: string[] = [];
    for (const m of msgs) {
      const c = (m as { content?: unknown } | null)?.content;
      if (typeof c === "string") parts.push(c);
      else if (Array.isArray(c)) {
        for (const p of c)
          if (typeof (p as { text?: unknown })?.text === "string") parts.push((p as { text: string }).text);
      } else throw new HttpError(400, "each message needs a string 'content'");
    }
    return tokenize(parts.join("\n"));
  }
  const p = body.prompt;
  if (typeof p === "string") return tokenize(p);
  if (Array.isArray(p) && p.every((x) => typeof x === "string")) return tokenize(p.join("\n"));
  throw new HttpError(400, "'prompt' must be a string");
}

/** The body as a JSON object; `empty` stands for a body of no bytes (a reset or an erase sends none). */
export async function readJson(
  req: IncomingMessage,
  empty: Record<string, unknown> | null = null,
): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 64 * 1024 * 1024) throw new HttpError(413, "request body too large");
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "" && empty !== null) return empty;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new HttpError(400, "request body is not valid JSON");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new HttpError(400, "request body must be a JSON object");
  return v as Record<string, unknown>;
}

/** The prompt's tokens: the system prompt (a string or text blocks), then the messages. */
export function messagesPrompt(body: Record<string, unknown>): string[] {
  const s = body.system;
  const system =
    typeof s === "string"
      ? s
      : Array.isArray(s)
        ? s
            .map((b) =>
              typeof (b as { text?: unknown })?.text === "string" ? (b as { text: string }).text : "",
            )
            .join("\n")
        : s === undefined
          ? ""
          : null;
  if (system === null) throw new HttpError(400, "'system' must be a string or an array of text blocks");
  const rest = promptOf(body, true);
  return system === "" ? rest : [...tokenize(system), ...rest];
}

/** `max_tokens` is required by the Messages API (the others default it). */
export function messagesMaxTokens(body: Record<string, unknown>): void {
  if (body.max_tokens === undefined) throw new HttpError(400, "max_tokens: Field required");
}
