import { describe, expect, it } from "vitest";
import { ResponseState } from "../../../src/core/client/response-state.ts";
import { ThinkTags } from "../../../src/core/client/think-tags.ts";
import type { RequestRecord } from "../../../src/schema/v1.ts";

function run(
  events: { data: string; event?: string }[],
  o: { api?: "chat" | "responses"; tags?: "think"; maxTokens?: number; ignoreEos?: boolean } = {},
) {
  const errors: string[] = [];
  const s = new ResponseState({
    api: o.api ?? "chat",
    reasoningTags: o.tags ?? null,
    keepText: true,
    serverOffsetMs: 0,
    setError: (code) => errors.push(code),
  });
  events.forEach((e, i) => {
    s.event({ data: e.data, event: e.event ?? null }, 10 * (i + 1));
  });
  const rec = {
    usage: s.usage,
    max_tokens: o.maxTokens ?? 64,
    finish_reason: s.finishReason,
    error: errors.length > 0 ? { code: errors[0]!, message: "" } : null,
  } as RequestRecord;
  s.finish(rec, o.ignoreEos ?? false);
  return { s, rec, errors };
}
const chunk = (delta: Record<string, unknown>) => ({
  data: JSON.stringify({ choices: [{ index: 0, delta }] }),
});
const usage = (completion: number, details?: Record<string, unknown>) => ({
  data: JSON.stringify({
    choices: [],
    usage: {
      prompt_tokens: 4,
      completion_tokens: completion,
      ...(details ? { completion_tokens_details: details } : {}),
    },
  }),
});
const DONE = { data: "[DONE]" };

describe("ResponseState", () => {
  it("times reasoning apart from the answer (both field names)", () => {
    const { rec } = run([
      chunk({ role: "assistant" }),
      chunk({ reasoning_content: "hm" }),
      chunk({ reasoning: "ok" }),
      chunk({ content: "A" }),
      chunk({ content: "B" }),
      usage(4),
      DONE,
    ]);
    expect(rec).toMatchObject({
      first_reasoning_ms: 20,
      first_answer_ms: 40,
      reasoning_events: 2,
      reasoning_tokens: 2,
      reasoning_tokens_source: "events",
      answer_tokens: 2,
    });
  });

  it("prefers the server's reasoning_tokens", () => {
    const { rec } = run([
      chunk({ reasoning_content: "a" }),
      chunk({ content: "b" }),
      usage(9, { reasoning_tokens: 6 }),
      DONE,
    ]);
    expect(rec).toMatchObject({ reasoning_tokens: 6, reasoning_tokens_source: "usage", answer_tokens: 3 });
  });

  it("a plain stream has no reasoning fields: its first token is the answer's", () => {
    const { rec } = run([chunk({ content: "a" }), chunk({ content: "b" }), usage(2), DONE]);
    expect(rec.first_answer_ms).toBeUndefined();
    expect(rec.reasoning_tokens).toBeUndefined();
  });

  it("counts tool calls and times the first", () => {
    const { s, rec } = run([
      chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "get", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: "c2", function: { name: "put", arguments: "{}" } }] }),
      usage(6),
      DONE,
    ]);
    expect(s.eventTimes).toEqual([10, 20, 30]);
    expect(rec).toMatchObject({ first_tool_call_ms: 10, tool_calls: 2 });
  });

  it("counts nothing after [DONE], and says how many came", () => {
    const { s, rec } = run([chunk({ content: "a" }), usage(1), DONE, chunk({ content: "late" }), DONE]);
    expect(s.eventTimes).toEqual([10]);
    expect(rec.events_after_done).toBe(1);
  });

  it("an event: error frame is the server's error, JSON or not", () => {
    expect(run([{ data: "model crashed", event: "error" }]).errors).toEqual(["server_error_event"]);
    expect(run([{ data: '{"message":"x"}', event: "error" }]).errors).toEqual(["server_error_event"]);
  });

  it("refuses several choices in one stream", () => {
    const two = { data: JSON.stringify({ choices: [{ index: 1, delta: { content: "b" } }] }) };
    expect(run([chunk({ content: "a" }), two, usage(2), DONE]).errors).toEqual(["multiple_choices"]);
  });

  it("a usage count that cannot be true is invalid_usage, the stream's own figures kept", () => {
    const { s, rec } = run([chunk({ content: "a" }), chunk({ content: "b" }), usage(1e15), DONE]);
    expect(rec.error?.code).toBe("invalid_usage");
    expect(s.eventTimes).toEqual([10, 20]);
    // 64 per event is the bound, 2 x max_tokens the other
    expect(run([chunk({ content: "a" }), usage(64), DONE], { maxTokens: 64 }).rec.error).toBeNull();
    expect(run([chunk({ content: "a" }), usage(65), DONE], { maxTokens: 64 }).rec.error?.code).toBe(
      "invalid_usage",
    );
    expect(
      run([chunk({ content: "a" }), chunk({ content: "b" }), usage(9), DONE], { maxTokens: 4 }).rec.error
        ?.code,
    ).toBe("invalid_usage");
  });

  it("ignore_eos answered short is short_output", () => {
    const stop = { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) };
    expect(run([chunk({ content: "a" }), stop, usage(10), DONE], { ignoreEos: true }).rec.short_output).toBe(
      true,
    );
    expect(
      run([chunk({ content: "a" }), stop, usage(10), DONE], { ignoreEos: false }).rec.short_output,
    ).toBeUndefined();
    expect(
      run([chunk({ content: "a" }), usage(64), DONE], { ignoreEos: true }).rec.short_output,
    ).toBeUndefined();
  });

  it("reads a Responses stream: typed events, the terminal event instead of [DONE]", () => {
    const t = (type: string, o: Record<string, unknown> = {}) => ({
      data: JSON.stringify({ type, ...o }),
      event: type,
    });
    const { s, rec, errors } = run(
      [
        t("response.created", { response: { id: "resp_9" } }),
        t("response.reasoning_text.delta", { delta: "think" }),
        t("response.output_text.delta", { delta: "Hi" }),
        t("response.output_text.done", { text: "Hi" }),
        t("response.completed", {
          response: {
            id: "resp_9",
            usage: { input_tokens: 3, output_tokens: 2, input_tokens_details: { cached_tokens: 1 } },
          },
        }),
      ],
      { api: "responses" },
    );
    expect(errors).toEqual([]);
    expect(s.done).toBe(true);
    expect(s.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, cached_tokens: 1 });
    expect(s.responseId).toBe("resp_9");
    expect(s.text).toEqual(["Hi"]);
    expect(rec).toMatchObject({ first_reasoning_ms: 20, first_answer_ms: 30, reasoning_tokens: 1 });
  });
});

describe("ThinkTags", () => {
  const feed = (parts: string[]) => {
    const t = new ThinkTags();
    parts.forEach((p, i) => {
      t.feed(p, i + 1);
    });
    t.finish();
    return [t.firstReasoningMs, t.firstAnswerMs, t.reasoningEvents];
  };
  it("finds a block split token by token, as llama.cpp sends it", () => {
    expect(feed(["<", "t", "hi", "n", "k", ">", "a b", "<", "/", "think", ">", " answer"])).toEqual([
      1, 12, 11,
    ]);
  });
  it("the answer may start in the event that closes the block", () => {
    expect(feed(["<think>x", "y</think>Hello"])).toEqual([1, 2, 2]);
  });
  it("leading whitespace before the block is allowed", () => {
    expect(feed(["\n", "<think>", "x", "</think>", "\n\n", "A"])).toEqual([1, 6, 4]);
  });
  it("no tags: all answer", () => {
    expect(feed(["Hello", " world"])).toEqual([null, 1, 0]);
  });
  it("a close tag without an opening one: reasoning up to it", () => {
    expect(feed(["x", "y", "</think>", "A"])).toEqual([1, 4, 3]);
  });
  it("a block never closed: all reasoning, no answer", () => {
    expect(feed(["<think>", "x", "y"])).toEqual([1, null, 3]);
  });
  it("text that only looks like the start of a tag is an answer", () => {
    expect(feed(["<th", "ree>"])).toEqual([null, 1, 0]);
  });
});
