import { describe, expect, it } from "vitest";
import { interpretChunk } from "../../../src/core/client/chunk.ts";

describe("interpretChunk", () => {
  it("role-only, empty and usage-only chunks carry no content", () => {
    expect(interpretChunk({ choices: [{ delta: { role: "assistant" } }] }).contentChars).toBe(0);
    expect(interpretChunk({ choices: [{ delta: { role: "assistant", content: "" } }] }).contentChars).toBe(0);
    const u = interpretChunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 7 } });
    expect(u.contentChars).toBe(0);
    expect(u.usage).toEqual({ prompt: 5, completion: 7, cached: null, invalid: null });
  });

  it("counts content, reasoning_content, reasoning and completions text", () => {
    expect(interpretChunk({ choices: [{ delta: { content: "abc" } }] }).contentChars).toBe(3);
    expect(interpretChunk({ choices: [{ delta: { reasoning_content: "ab" } }] }).contentChars).toBe(2);
    expect(interpretChunk({ choices: [{ delta: { reasoning: "abcd" } }] }).contentChars).toBe(4);
    expect(interpretChunk({ choices: [{ text: "xy", finish_reason: null }] }).contentChars).toBe(2);
  });

  it("reads usage in the last content chunk, with cached tokens when reported", () => {
    const c = interpretChunk({
      choices: [{ delta: { content: "z" }, finish_reason: "length" }],
      usage: { prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 8 } },
    });
    expect(c.contentChars).toBe(1);
    expect(c.finishReason).toBe("length");
    expect(c.usage).toEqual({ prompt: 10, completion: 3, cached: 8, invalid: null });
  });

  it("recognises an error object mid-stream", () => {
    expect(interpretChunk({ error: { message: "overloaded" } }).errorMessage).toBe("overloaded");
    expect(interpretChunk({ error: "boom" }).errorMessage).toBe("boom");
    expect(interpretChunk([1, 2]).errorMessage).toMatch(/not a JSON object/);
  });
  it("a count that is not a non-negative integer is dropped and named, never rounded", () => {
    const c = interpretChunk({
      choices: [],
      usage: { prompt_tokens: -3, completion_tokens: 8.5, prompt_tokens_details: { cached_tokens: "7" } },
    });
    expect(c.usage).toMatchObject({ prompt: null, completion: null, cached: null });
    expect(c.usage!.invalid).toBe(
      'usage.prompt_tokens is -3, not a non-negative integer; usage.completion_tokens is 8.5, not a non-negative integer; usage.prompt_tokens_details.cached_tokens is "7", not a non-negative integer',
    );
  });
});
