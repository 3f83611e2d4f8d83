// Tagged copies of dataset entries: where the tag goes decides what a prefix cache can serve.
import { describe, expect, it } from "vitest";
import { parseDataset, sharedSystemPrompts, taggedEntry } from "../../../src/core/workload/dataset.ts";

const line = (system: string, user: string) =>
  JSON.stringify({
    messages: [
      { role: "system", content: system },
      { role: "user", content: user },
    ],
  });

describe("tagged dataset entries", () => {
  const d = parseDataset([line("S", "a"), line("S", "b"), line("own", "c")].join("\n"), "t.jsonl");
  it("a system prompt several lines open with is the dataset's own sharing; one line's own is not", () => {
    expect([...sharedSystemPrompts(d)]).toEqual(["S"]);
  });
  it("keepSystem: the tag after the system message; otherwise at the very start", () => {
    const kept = taggedEntry(d.entries[0]!, "[t1]", true);
    expect(kept.messages!.map((m) => m.content)).toEqual(["S", "[t1]\na"]);
    const first = taggedEntry(d.entries[2]!, "[t2]");
    expect(first.messages!.map((m) => m.content)).toEqual(["[t2]\nown", "c"]);
    // a completions prompt: the tag leads it
    const p = parseDataset(JSON.stringify({ prompt: "hello" }), "p.jsonl");
    expect(taggedEntry(p.entries[0]!, "[t3]").prompt).toBe("[t3]\nhello");
  });
});
