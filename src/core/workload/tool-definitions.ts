/**
 * `--tools FILE --tool-choice auto|required|NAME`: function definitions sent with every request.
 * The file holds OpenAI chat tool definitions
 * (`[{"type":"function","function":{"name":...,"parameters":...}}]`); it is checked here, by
 * index and field, before any request is sent.
 */
import { basename } from "node:path";
import { TokenbenchError } from "../../schema/errors.ts";
import type { SweepConfig } from "../../schema/v1.ts";
import { readWorkloadFile } from "./dataset.ts";

export class ToolsError extends TokenbenchError {
  constructor(message: string) {
    super("tools_invalid", message);
  }
}

/** The `--tools` file, checked, as the configuration records it (the definitions as sent). */
export function loadTools(path: string, choice: string): NonNullable<SweepConfig["tools"]> {
  const file = readWorkloadFile(path, (m) => new ToolsError(m));
  const t = parseTools(file.text, path, choice);
  if (typeof t === "string") throw new ToolsError(t);
  return {
    name: basename(path),
    sha256: file.sha256,
    count: t.length,
    choice,
    definitions: t,
  };
}

/** The tool definitions of a file's text, or a message naming what is wrong (file, index, field). */
export function parseTools(text: string, file: string, choice: string): Record<string, unknown>[] | string {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    return `${file} is not JSON (${(e as Error).message}); it should hold an array of OpenAI tool definitions`;
  }
  if (!Array.isArray(j) || j.length === 0)
    return `${file} should hold a non-empty JSON array of tool definitions ({"type":"function","function":{"name":...}})`;
  const names: string[] = [];
  for (let i = 0; i < j.length; i++) {
    const d = j[i] as { type?: unknown; function?: { name?: unknown; parameters?: unknown } } | null;
    if (d === null || typeof d !== "object" || d.type !== "function")
      return `${file}: tool ${i} needs "type": "function"`;
    const fn = d.function;
    if (
      fn === null ||
      typeof fn !== "object" ||
      typeof fn.name !== "string" ||
      !/^[A-Za-z0-9_-]{1,64}$/.test(fn.name)
    )
      return `${file}: tool ${i} needs function.name of 1-64 letters, digits, _ or -`;
    if (fn.parameters !== undefined && (fn.parameters === null || typeof fn.parameters !== "object"))
      return `${file}: tool ${i} (${fn.name}): function.parameters must be a JSON Schema object`;
    names.push(fn.name);
  }
  if (choice !== "auto" && choice !== "required" && !names.includes(choice))
    return `--tool-choice ${choice}: no tool of that name in ${file} (it has ${names.join(", ")}); use auto, required or one of them`;
  return j as Record<string, unknown>[];
}
