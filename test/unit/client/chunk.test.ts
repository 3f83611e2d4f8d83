import { describe, expect, it } from "vitest";
import {
  type ChunkInfo,
  interpretChunk,
  interpretMessagesEvent,
  interpretResponsesEvent,
} from "../../../src/core/client/chunk.ts";
import { toolsBody } from "../../../src/core/client/tool-calls.ts";
import { generationBody, promptTokensOf } from "../../../src/core/server/target.ts";

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

describe("interpretMessagesEvent (the Messages API)", () => {
  const m = interpretMessagesEvent;
  it("text, thinking and tool-input deltas are answer, reasoning and tool output; pings and stops nothing", () => {
    expect(
      chars(m({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "abc" } })),
    ).toEqual([3, 0, 0]);
    expect(
      chars(m({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "ab" } })),
    ).toEqual([0, 2, 0]);
    expect(
      chars(
        m({
          type: "content_block_delta",
          index: 1,
          delta: { type: "input_json_delta", partial_json: '{"q' },
        }),
      ),
    ).toEqual([0, 0, 3]);
    expect(
      chars(
        m({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "xyz" } }),
      ),
    ).toEqual([0, 0, 0]);
    for (const type of ["ping", "content_block_stop"])
      expect(chars(m({ type, index: 0 }))).toEqual([0, 0, 0]);
    const tool = m({
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "t", name: "lookup", input: {} },
    });
    // the call is counted at its block; its name is no token of its own
    expect([tool.toolCalls, tool.toolCallsAreNew, chars(tool)]).toEqual([1, true, [0, 0, 0]]);
  });

  it("usage: the prompt is input_tokens plus the cache's reads and writes, the cached part the reads", () => {
    const start = m({
      type: "message_start",
      message: {
        id: "msg_1",
        usage: {
          input_tokens: 3,
          cache_read_input_tokens: 40,
          cache_creation_input_tokens: 5,
          output_tokens: 0,
        },
      },
    });
    expect(start.usage).toEqual({ prompt: 48, completion: 0, cached: 40, reasoning: null, invalid: null });
    expect(start.responseId).toBe("msg_1");
    const end = m({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } });
    // no input count in this event: null here, so the response keeps message_start's
    expect(end.usage).toEqual({ prompt: null, completion: 9, cached: null, reasoning: null, invalid: null });
    expect(m({ type: "message_delta", delta: {}, usage: { output_tokens: 2.5 } }).usage?.invalid).toMatch(
      /output_tokens/,
    );
  });

  it("stop reasons in the records' words; message_stop ends the stream; an error event names its type", () => {
    const why = (r: string) => m({ type: "message_delta", delta: { stop_reason: r } }).finishReason;
    expect(["end_turn", "stop_sequence", "max_tokens", "tool_use", "refusal"].map(why)).toEqual([
      "stop",
      "stop",
      "length",
      "tool_calls",
      "refusal",
    ]);
    expect(m({ type: "message_stop" }).terminal).toBe(true);
    const e = m({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    expect([e.errorType, e.errorMessage]).toEqual(["overloaded_error", "overloaded_error: Overloaded"]);
  });

  it("the request: system apart, max_tokens, tools as name/input_schema, tool_choice any/tool; the answer's prompt count", () => {
    const body = generationBody(
      "messages",
      "m",
      {
        prompt: "",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "hi" },
        ],
      },
      16,
      true,
    );
    expect(body).toEqual({
      model: "m",
      system: "be brief",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 16,
      stream: true,
    });
    const def = {
      type: "function" as const,
      function: { name: "get", description: "d", parameters: { type: "object" } },
    };
    expect(toolsBody("messages", { tools: [def], choice: "required" })).toEqual({
      tools: [{ name: "get", description: "d", input_schema: { type: "object" } }],
      tool_choice: { type: "any" },
    });
    expect(toolsBody("messages", { tools: [def], choice: "get" }).tool_choice).toEqual({
      type: "tool",
      name: "get",
    });
    expect(promptTokensOf("messages", { usage: { input_tokens: 22, cache_read_input_tokens: 8 } })).toBe(30);
    expect(promptTokensOf("messages", { usage: {} })).toBeUndefined();
  });
});
