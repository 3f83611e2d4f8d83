import { describe, expect, it } from "vitest";
import { type ChunkInfo, interpretChunk, interpretResponsesEvent } from "../../../src/core/client/chunk.ts";

const chars = (c: ChunkInfo) => [c.answerChars, c.reasoningChars, c.toolChars];

describe("interpretChunk", () => {
  it("role-only, empty and usage-only chunks carry no content", () => {
    expect(chars(interpretChunk({ choices: [{ delta: { role: "assistant" } }] }))).toEqual([0, 0, 0]);
    expect(chars(interpretChunk({ choices: [{ delta: { role: "assistant", content: "" } }] }))).toEqual([
      0, 0, 0,
    ]);
    const u = interpretChunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 7 } });
    expect(chars(u)).toEqual([0, 0, 0]);
    expect(u.usage).toEqual({ prompt: 5, completion: 7, cached: null, reasoning: null, invalid: null });
  });

  it("counts content and completions text as answer, reasoning_content and reasoning as reasoning", () => {
    expect(chars(interpretChunk({ choices: [{ delta: { content: "abc" } }] }))).toEqual([3, 0, 0]);
    expect(chars(interpretChunk({ choices: [{ delta: { reasoning_content: "ab" } }] }))).toEqual([0, 2, 0]);
    expect(chars(interpretChunk({ choices: [{ delta: { reasoning: "abcd" } }] }))).toEqual([0, 4, 0]);
    expect(chars(interpretChunk({ choices: [{ text: "xy", finish_reason: null }] }))).toEqual([2, 0, 0]);
    // reasoning is never part of the answer's text (a conversation re-sends the answer only)
    expect(interpretChunk({ choices: [{ delta: { reasoning_content: "hm", content: "ok" } }] }).text).toBe(
      "ok",
    );
  });

  it("counts tool-call names and argument deltas, and the calls by index", () => {
    const first = interpretChunk({
      choices: [
        {
          delta: {
            tool_calls: [
              { index: 0, id: "call_1", type: "function", function: { name: "get", arguments: "" } },
            ],
          },
        },
      ],
    });
    expect(chars(first)).toEqual([0, 0, 3]);
    expect([first.toolCalls, first.toolIndexes]).toEqual([0, [0]]);
    const args = interpretChunk({
      choices: [{ delta: { tool_calls: [{ index: 1, function: { arguments: '{"a":' } }] } }],
    });
    expect(chars(args)).toEqual([0, 0, 5]);
    expect([args.toolCalls, args.toolIndexes]).toEqual([0, [1]]);
    // a call with an id and no index is new on its own
    const unindexed = interpretChunk({
      choices: [{ delta: { tool_calls: [{ id: "call_9", function: { name: "f" } }] } }],
    });
    expect([unindexed.toolCalls, unindexed.toolCallsAreNew, unindexed.toolIndexes]).toEqual([1, true, []]);
  });

  it("reads usage with cached and reasoning token details", () => {
    const c = interpretChunk({
      choices: [{ delta: { content: "z" }, finish_reason: "length" }],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 3,
        prompt_tokens_details: { cached_tokens: 8 },
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    });
    expect(c.finishReason).toBe("length");
    expect(c.usage).toEqual({ prompt: 10, completion: 3, cached: 8, reasoning: 2, invalid: null });
  });

  it("sees a second choice (n > 1)", () => {
    expect(interpretChunk({ choices: [{ index: 1, delta: { content: "b" } }] }).maxChoiceIndex).toBe(1);
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

describe("interpretResponsesEvent", () => {
  const ev = (o: Record<string, unknown>) => interpretResponsesEvent(o);
  it("reads the typed deltas by kind", () => {
    expect(chars(ev({ type: "response.output_text.delta", delta: "abc" }))).toEqual([3, 0, 0]);
    expect(chars(ev({ type: "response.reasoning_text.delta", delta: "ab" }))).toEqual([0, 2, 0]);
    expect(chars(ev({ type: "response.reasoning_summary_text.delta", delta: "a" }))).toEqual([0, 1, 0]);
    expect(chars(ev({ type: "response.function_call_arguments.delta", delta: '{"x"' }))).toEqual([0, 0, 4]);
    const item = ev({
      type: "response.output_item.added",
      item: { type: "function_call", name: "get", arguments: "" },
    });
    expect([item.toolChars, item.toolCalls, item.toolCallsAreNew]).toEqual([0, 1, true]);
    // a message item, done events and the created event carry nothing measured
    expect(chars(ev({ type: "response.output_item.added", item: { type: "message" } }))).toEqual([0, 0, 0]);
    expect(chars(ev({ type: "response.output_text.done", text: "abc" }))).toEqual([0, 0, 0]);
    expect(ev({ type: "response.created", response: { id: "resp_1" } }).responseId).toBe("resp_1");
  });

  it("ends on response.completed or response.incomplete with the usage in the API's names", () => {
    const c = ev({
      type: "response.completed",
      response: {
        id: "resp_1",
        usage: {
          input_tokens: 30,
          output_tokens: 5,
          total_tokens: 35,
          input_tokens_details: { cached_tokens: 10 },
          output_tokens_details: { reasoning_tokens: 2 },
        },
      },
      timings: { predicted_n: 5 },
    });
    expect([c.terminal, c.finishReason]).toEqual([true, "stop"]);
    expect(c.usage).toEqual({ prompt: 30, completion: 5, cached: 10, reasoning: 2, invalid: null });
    expect(c.timings).toEqual({ predicted_n: 5 });
    const i = ev({
      type: "response.incomplete",
      response: { incomplete_details: { reason: "max_output_tokens" } },
    });
    expect([i.terminal, i.finishReason]).toEqual([true, "length"]);
  });

  it("takes response.failed and error events as the server's errors", () => {
    expect(
      ev({ type: "response.failed", response: { error: { message: "out of memory" } } }).errorMessage,
    ).toBe("out of memory");
    expect(ev({ type: "error", code: "server_error", message: "overloaded" }).errorMessage).toBe(
      "overloaded",
    );
  });
});
