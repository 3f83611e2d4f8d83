/**
 * `--dataset FILE`: real prompts instead of synthetic ones. JSON Lines where each line has
 * `prompt` (a string) or `messages` (OpenAI chat messages) and optionally `output_tokens`; or the
 * ShareGPT JSON layout (`[{"conversations": [{"from": "human", "value": ...}, ...]}]`, the first
 * human turn as the prompt). Prompts are used in the order of a seeded shuffle; their lengths are
 * the server's own count (usage.prompt_tokens). The document records the dataset's name, line
 * count and SHA-256, so the workload fingerprint covers it.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { TokenbenchError } from "../../schema/errors.ts";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface DatasetEntry {
  prompt: string | null;
  messages: ChatMessage[] | null;
  outputTokens: number | null;
  /** The prompt's length in tokens as asked (a trace's input_length), when the file says. */
  promptTokens?: number | null;
}

export interface Dataset {
  name: string;
  lines: number;
  sha256: string;
  entries: DatasetEntry[];
  /** A trace (trace.ts): entries are sent in file order, each at this offset (ms) from the level's start. */
  offsetsMs?: number[];
}

export class DatasetError extends TokenbenchError {
  constructor(message: string) {
    super("dataset_invalid", message);
  }
}

const ROLES = new Set(["system", "user", "assistant"]);

function entryOf(o: unknown, where: string): DatasetEntry {
  if (o === null || typeof o !== "object" || Array.isArray(o))
    throw new DatasetError(`${where}: not a JSON object`);
  const r = o as Record<string, unknown>;
  const out =
    r.output_tokens === undefined || r.output_tokens === null
      ? null
      : Number.isInteger(r.output_tokens) && (r.output_tokens as number) > 0
        ? (r.output_tokens as number)
        : (() => {
            throw new DatasetError(`${where}: output_tokens must be a positive integer`);
          })();
  if (typeof r.prompt === "string" && r.prompt !== "")
    return { prompt: r.prompt, messages: null, outputTokens: out };
  if (Array.isArray(r.messages) && r.messages.length > 0) {
    const messages = r.messages.map((m, i) => {
      const mm = m as Record<string, unknown>;
      if (!mm || typeof mm.role !== "string" || !ROLES.has(mm.role) || typeof mm.content !== "string")
        throw new DatasetError(
          `${where}: messages[${i}] must be {"role": system|user|assistant, "content": string}`,
        );
      return { role: mm.role as ChatMessage["role"], content: mm.content };
    });
    return { prompt: null, messages, outputTokens: out };
  }
  throw new DatasetError(`${where}: needs "prompt" (a non-empty string) or "messages" (a non-empty array)`);
}

export function parseDataset(text: string, name: string): Dataset {
  const sha256 = createHash("sha256").update(text).digest("hex");
  const trimmed = text.trimStart();
  let entries: DatasetEntry[];
  let lines: number;
  if (trimmed.startsWith("[")) {
    // ShareGPT: an array of {conversations: [{from, value}]}
    let arr: unknown;
    try {
      arr = JSON.parse(text);
    } catch {
      throw new DatasetError(`${name}: starts with "[" but is not valid JSON (ShareGPT layout expected)`);
    }
    entries = [];
    for (const [i, c] of (arr as unknown[]).entries()) {
      const conv = (c as { conversations?: { from?: string; value?: string }[] })?.conversations;
      const human = Array.isArray(conv)
        ? conv.find((t) => t?.from === "human" && typeof t.value === "string")
        : undefined;
      if (human?.value) entries.push({ prompt: human.value, messages: null, outputTokens: null });
      else if (!Array.isArray(conv))
        throw new DatasetError(`${name}: item ${i} has no "conversations" array`);
    }
    lines = (arr as unknown[]).length;
  } else {
    const raw = text.split("\n");
    entries = [];
    lines = 0;
    raw.forEach((line, i) => {
      if (line.trim() === "") return;
      lines++;
      let o: unknown;
      try {
        o = JSON.parse(line);
      } catch {
        throw new DatasetError(`${name}: line ${i + 1} is not valid JSON`);
      }
      entries.push(entryOf(o, `${name}: line ${i + 1}`));
    });
  }
  if (entries.length === 0) throw new DatasetError(`${name}: no usable prompt in it`);
  return { name, lines, sha256, entries };
}

/** A workload file's text, or the error `fail` makes of "cannot be read" (with the OS's code). */
export function readWorkloadFile(path: string, fail: (message: string) => Error): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw fail(`${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

export function loadDataset(path: string): Dataset {
  return parseDataset(
    readWorkloadFile(path, (m) => new DatasetError(m)),
    basename(path),
  );
}
