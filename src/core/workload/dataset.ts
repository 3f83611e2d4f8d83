/**
 * `--dataset FILE`: real prompts instead of synthetic ones. JSON Lines where each line has
 * `prompt` (a string) or `messages` (OpenAI chat messages) and optionally `output_tokens`; or the
 * ShareGPT JSON layout (`[{"conversations": [{"from": "human", "value": ...}, ...]}]`, the first
 * human turn as the prompt). Prompts are used in the order of a seeded shuffle; their lengths are
 * the server's own count (usage.prompt_tokens). The document records the dataset's name, line
 * count and SHA-256, so the workload fingerprint covers it.
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { TokenbenchError } from "../../schema/errors.ts";
import type { AgentSessions } from "./agent-types.ts";
import { readRegularFile } from "./regular-file.ts";

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
  /** `--agent-sessions` (agent-sessions.ts): sessions played by the agent loop instead of entries (none). */
  agents?: AgentSessions;
  /** A trace (trace.ts): entries are sent in file order, each at this offset (ms) from the level's start. */
  offsetsMs?: number[];
  /** What was read but is not used, named once (the sweep prints each as a notice). */
  notices?: string[];
}

/** A workload file as read: its text (a leading byte-order mark dropped) and the SHA-256 of its bytes. */
export interface WorkloadFile {
  text: string;
  sha256: string;
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

/**
 * A dataset entry with a unique tag, so a copy (a warmup, a reuse) shares no prefix with the entry
 * as measured (prefix caches match from the start): ahead of everything, or with `keepSystem` ahead
 * of its first message after the system ones (a system prompt several lines open with is the
 * dataset's own sharing, which every measured line has too: see sharedSystemPrompts).
 */
export function taggedEntry(e: DatasetEntry, tag: string, keepSystem = false): DatasetEntry {
  if (e.messages === null) return { ...e, prompt: `${tag}\n${e.prompt ?? ""}` };
  const first = keepSystem ? e.messages.findIndex((m) => m.role !== "system") : 0;
  const i = first === -1 ? 0 : first;
  const messages = e.messages.map((m, k) => (k === i ? { ...m, content: `${tag}\n${m.content}` } : m));
  return { ...e, messages };
}

const SHARED_SYSTEM = new WeakMap<Dataset, ReadonlySet<string>>();

/** The share of the dataset's text (characters) in system prompts several entries open with. */
export function sharedSystemShare(d: Dataset): number {
  const shared = sharedSystemPrompts(d);
  let all = 0;
  let part = 0;
  for (const e of d.entries) {
    if (e.messages === null) {
      all += (e.prompt ?? "").length;
      continue;
    }
    for (const [i, m] of e.messages.entries()) {
      all += m.content.length;
      if (i === 0 && m.role === "system" && shared.has(m.content)) part += m.content.length;
    }
  }
  return all > 0 ? part / all : 0;
}

/** The system prompts more than one entry opens with: the sharing the dataset itself asks for. */
export function sharedSystemPrompts(d: Dataset): ReadonlySet<string> {
  let out = SHARED_SYSTEM.get(d);
  if (!out) {
    const seen = new Set<string>();
    const shared = new Set<string>();
    for (const e of d.entries) {
      const m = e.messages?.[0];
      if (m?.role !== "system") continue;
      if (seen.has(m.content)) shared.add(m.content);
      seen.add(m.content);
    }
    out = shared;
    SHARED_SYSTEM.set(d, out);
  }
  return out;
}

/** `text` as read from a file, without a leading byte-order mark (editors on Windows write one). */
export const withoutBom = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

export function parseDataset(
  input: string,
  name: string,
  sha256 = createHash("sha256").update(input).digest("hex"),
): Dataset {
  const text = withoutBom(input);
  const notices: string[] = [];
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
    if (!Array.isArray(arr))
      throw new DatasetError(`${name}: is JSON but not an array (ShareGPT layout expected)`);
    entries = [];
    const noHuman: number[] = [];
    for (const [i, c] of arr.entries()) {
      const conv = (c as { conversations?: { from?: string; value?: string }[] })?.conversations;
      if (!Array.isArray(conv)) throw new DatasetError(`${name}: item ${i} has no "conversations" array`);
      const human = conv.find((t) => t?.from === "human" && typeof t.value === "string" && t.value !== "");
      if (human?.value) entries.push({ prompt: human.value, messages: null, outputTokens: null });
      else noHuman.push(i);
    }
    if (noHuman.length > 0)
      notices.push(
        `${name}: ${noHuman.length} of ${arr.length} conversations have no human turn to use as the prompt (item${noHuman.length > 1 ? "s" : ""} ${noHuman.slice(0, 5).join(", ")}${noHuman.length > 5 ? ", ..." : ""}): they are skipped`,
      );
    lines = arr.length;
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
  const seen = new Set<string>();
  let repeats = 0;
  for (const e of entries) {
    const key = JSON.stringify(e.messages ?? e.prompt);
    if (seen.has(key)) repeats++;
    else seen.add(key);
  }
  if (repeats > 0)
    notices.push(
      `${name}: ${repeats} of ${entries.length} prompts repeat an earlier one exactly: the server's prefix cache will serve those repeats (part of this dataset's workload)`,
    );
  return { name, lines, sha256, entries, ...(notices.length > 0 ? { notices } : {}) };
}

/** The offset of the first byte that is not well-formed UTF-8 (RFC 3629), or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    // 2-, 3- or 4-byte sequences; C0, C1 and F5..FF never start one
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (n === 0 || i + n >= b.length) return i; // not a lead byte, or the file ends inside the sequence
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const d = b[i + k]!;
      if ((d & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    const min = [0, 0x80, 0x800, 0x10000][n]!;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return -1;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A workload file: its bytes hashed as read (two files that differ are never one workload), the
 * text decoded as UTF-8 (a byte that is not is refused with its line and offset, never replaced),
 * a leading byte-order mark dropped. `fail` makes the error for the file's kind.
 */
export function readWorkloadFile(path: string, fail: (message: string) => Error): WorkloadFile {
  const bytes = readRegularFile(path, (detail) => fail(`${path}: ${detail}`));
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    const lineStart = bytes.lastIndexOf(0x0a, at - 1) + 1;
    const line = bytes.subarray(0, at).filter((x) => x === 0x0a).length + 1;
    throw fail(
      `${path}: is not valid UTF-8 at line ${line}, column ${at - lineStart + 1} (byte ${at} of the file, 0x${bytes[at]?.toString(16).padStart(2, "0")}): save it as UTF-8 (e.g. iconv -f latin1 -t utf-8) or remove that byte`,
    );
  }
  return { text: withoutBom(text), sha256 };
}

export function loadDataset(path: string): Dataset {
  const file = readWorkloadFile(path, (m) => new DatasetError(m));
  return parseDataset(file.text, basename(path), file.sha256);
}
