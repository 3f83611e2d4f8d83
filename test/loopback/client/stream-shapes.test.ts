// Streams as reasoning and tool-calling models send them, the Responses API, every protocol
// variant the SSE standard allows, and the errors servers send instead of a stream: against the
// mock in its own process, each figure checked against the mock's own stamps of the same request.
import { afterAll, describe, expect, it } from "vitest";
import { deriveRequest } from "../../../src/core/results/metrics.ts";
import type { MockOptions } from "../../../src/mock/index.ts";
import type { RequestRecord } from "../../../src/schema/v1.ts";
import { allowanceMs, serverTtftMs, watched } from "../../helpers/lateness.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";
import { client, spec } from "../../helpers/servers.ts";

const mocks: MockProcess[] = [];
afterAll(() => Promise.all(mocks.map((m) => m.close())));
const mock = async (o: Partial<MockOptions>) => {
  const m = await startMock({ ttftMs: 20, itlMs: 5, serverTimestamps: true, ...o });
  mocks.push(m);
  return m;
};
type ClientOver = Parameters<typeof client>[1];

/** One request at one stream, with the client's self-check watching. */
async function one(url: string, over: ClientOver = {}, maxTokens = 20, extra = {}) {
  const c = client(url, over);
  await c.stream(spec({ maxTokens: 2 })); // a connection and a warm path first
  const { value: r, check } = await watched(() => c.stream(spec({ maxTokens, ...extra })));
  await c.close();
  return { r, late: allowanceMs(check) + 0.5 };
}

/**
 * A figure the client derived from event i against event 0 (TTFAT, the first tool call) is
 * exactly that event's own stamp, and neither was read before the mock wrote it: which event the
 * client picked is what is tested; how late it read them is its lateness, tested with the reads
 * (a fixed share of the self-check's bound here failed once on a machine at load 10).
 */
function expectFromEvent(r: RequestRecord, i: number, gapMs: number): void {
  expect(gapMs).toBeCloseTo(r.event_times_ms[i]! - r.event_times_ms[0]!, 6);
  for (const k of [0, i])
    expect(
      r.event_times_ms[k]! - r.server_event_times_ms![k]!,
      `event ${k} read before it was written`,
    ).toBeGreaterThanOrEqual(-0.5);
}

/** The mock's own time from its first event to event i (its stamps), ms. */
const serverSince = (r: RequestRecord, i: number) =>
  r.server_event_times_ms![i]! - r.server_event_times_ms![0]!;

describe("reasoning, timed apart from the answer", () => {
  it.each([
    ["reasoning_content", {}],
    ["reasoning", {}],
    ["think", { reasoningTags: "think" as const }],
  ] as const)(
    "delta %s: TTFT is the first thinking token, TTFAT the first answer token, by the mock's stamps",
    async (field, over) => {
      // 30 tokens of thinking at 10 ms each: 300 ms before the answer
      const m = await mock({ reasoningTokens: 30, reasoningField: field, itlMs: 10 });
      const { r } = await one(m.url, over, 40);
      expect(r.error).toBeNull();
      expect(r.event_times_ms).toHaveLength(40);
      expect(r.reasoning_events).toBe(30);
      expect([r.reasoning_tokens, r.reasoning_tokens_source, r.answer_tokens]).toEqual([30, "events", 10]);
      const d = deriveRequest(r);
      // TTFT: the first thinking token, as the server stamped it
      expect(d.ttftMs!).toBeGreaterThanOrEqual(serverTtftMs(r) - 0.5);
      // TTFAT - TTFT: the server's own time from its first token to its first answer token
      const own = serverSince(r, 30);
      // the mock held the thinking about 300 ms by its own stamps (it schedules on absolute
      // times: a late first event shortens the gap after it by as much)
      const mockLate = (await m.stats()).lateness.max ?? 0;
      expect(own).toBeGreaterThanOrEqual(300 - mockLate - 1);
      // the client's TTFAT and thinking span end at the event the mock wrote first after its
      // thinking (the 31st)
      expectFromEvent(r, 30, d.ttfatMs! - d.ttftMs!);
      expectFromEvent(r, 30, d.reasoningMs!);
    },
  );

  it("takes the server's reasoning_tokens when its usage has them", async () => {
    const m = await mock({ reasoningTokens: 6, reasoningUsage: true, tokensPerChunk: 3 });
    const { r } = await one(m.url, {}, 12);
    // 3 tokens per event: 2 reasoning events; the usage says 6 tokens
    expect([r.reasoning_events, r.reasoning_tokens, r.reasoning_tokens_source]).toEqual([2, 6, "usage"]);
  });

  it("a plain stream has no reasoning figures: its TTFAT is its TTFT", async () => {
    const m = await mock({});
    const { r } = await one(m.url, {}, 8);
    expect(r.reasoning_tokens).toBeUndefined();
    expect(deriveRequest(r).ttfatMs).toBe(deriveRequest(r).ttftMs);
  });
});

describe("tool calls", () => {
  const tools = {
    tools: [{ type: "function" as const, function: { name: "lookup", parameters: { type: "object" } } }],
    choice: "required",
  };
  it.each(["chat", "responses", "messages"] as const)(
    "%s: argument deltas are output, timed and counted",
    async (api) => {
      const m = await mock({ reasoningTokens: 4 });
      const { r } = await one(m.url, { api, tools }, 16);
      expect(r.error).toBeNull();
      expect(r.usage?.completion_tokens).toBe(16);
      expect(r.event_times_ms).toHaveLength(16);
      expect(r.tool_calls).toBe(1);
      // the first tool-call event is the first answer event, the mock's 5th token
      expect(r.first_tool_call_ms).toBe(r.first_answer_ms);
      const d = deriveRequest(r);
      expectFromEvent(r, 4, d.ttFirstToolCallMs! - d.ttftMs!);
      expect(serverSince(r, 4)).toBeGreaterThan(0);
    },
  );
});

describe("the Responses API", () => {
  // (the Messages API's content-block events too: its max_tokens stop is "length" as well)
  it.each(["responses", "messages"] as const)(
    "%s: typed events: TTFT, ITL and usage agree with the mock's own record",
    async (api) => {
      const m = await mock({});
      const { r, late } = await one(m.url, { api }, 24);
      expect(r.error).toBeNull();
      expect(r.usage?.completion_tokens).toBe(24);
      expect(r.usage?.prompt_tokens).toBeGreaterThan(0);
      expect(r.finish_reason).toBe("length"); // response.incomplete at max_output_tokens; stop_reason max_tokens
      expect(r.event_times_ms).toHaveLength(24);
      expect(deriveRequest(r).ttftMs!).toBeGreaterThanOrEqual(serverTtftMs(r) - 0.5);
      const gaps = r.event_times_ms.slice(1).map((t, i) => t - r.event_times_ms[i]!);
      const own = r.server_event_times_ms!.slice(1).map((t, i) => t - r.server_event_times_ms![i]!);
      const off = gaps.map((g, i) => Math.abs(g - own[i]!)).sort((a, b) => a - b);
      expect(off[Math.floor(off.length / 2)]!).toBeLessThanOrEqual(late);
    },
  );

  it("a stream without its terminal event is missing_done; response.failed is the server's error", async () => {
    const m = await mock({ faults: [{ kind: "no_done", rate: 1, every: null }] });
    const { r } = await one(m.url, { api: "responses" }, 8);
    // the Responses API has no [DONE]: the mock's no_done drops nothing there, so the stream is whole
    expect(r.error).toBeNull();
    const f = await mock({ faults: [{ kind: "error_event", rate: 1, every: null }] });
    const failed = (await one(f.url, { api: "responses" }, 8)).r;
    expect(failed.error?.code).toBe("server_error_event");
    expect(failed.error?.message).toMatch(/model crashed/);
  });
});

describe("the Messages API", () => {
  it("the prompt is input_tokens plus the cache's reads; the cached share is the reads; the system prompt counts", async () => {
    const m = await mock({ blockTokens: 4 });
    const prompt = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const c = client(m.url, { api: "messages" });
    const first = await c.stream(spec({ prompt, maxTokens: 4 }));
    const again = await c.stream(spec({ prompt, maxTokens: 4 }));
    const system = await c.stream(
      spec({
        prompt,
        maxTokens: 4,
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: prompt },
        ],
      }),
    );
    await c.close();
    expect(first.usage).toEqual({ prompt_tokens: 40, completion_tokens: 4, cached_tokens: 0 });
    // the mock caches whole blocks of 4: all 40 on the second send
    expect(again.usage).toEqual({ prompt_tokens: 40, completion_tokens: 4, cached_tokens: 40 });
    // "be brief" is two tokens more, sent as `system` (the API has no system role)
    expect(system.usage?.prompt_tokens).toBe(42);
  });

  it("thinking blocks are reasoning: TTFT the first thinking token, TTFAT the first text token", async () => {
    const m = await mock({ reasoningTokens: 10, itlMs: 10 });
    const { r } = await one(m.url, { api: "messages" }, 16);
    expect(r.error).toBeNull();
    expect([r.reasoning_events, r.reasoning_tokens, r.answer_tokens]).toEqual([10, 10, 6]);
    const d = deriveRequest(r);
    expectFromEvent(r, 10, d.ttfatMs! - d.ttftMs!);
    // 10 thinking tokens at 10 ms by the mock's own stamps (a late first event shortens the rest)
    expect(serverSince(r, 10)).toBeGreaterThanOrEqual(100 - ((await m.stats()).lateness.max ?? 0) - 1);
  });

  it("no message_stop is missing_done; an overloaded_error event is server_overloaded, the tokens before it kept", async () => {
    const m = await mock({ faults: [{ kind: "no_done", rate: 1, every: null }] });
    const { r } = await one(m.url, { api: "messages" }, 8);
    expect(r.error?.code).toBe("missing_done");
    expect(r.error?.message).toMatch(/message_stop/);
    expect(r.event_times_ms).toHaveLength(8);
    const f = await mock({ faults: [{ kind: "error_event", rate: 1, every: null }] });
    const failed = (await one(f.url, { api: "messages" }, 8)).r;
    expect(failed.error?.code).toBe("server_overloaded");
    expect(failed.error?.message).toMatch(/^overloaded_error: .*Overloaded/);
    expect(failed.event_times_ms.length).toBeGreaterThan(0);
  });
});

describe("every framing the SSE standard allows gives the same figures", () => {
  it.each([
    ["cr"],
    ["crlf"],
    ["bom"],
    ["no-space"],
    ["multiline"],
    ["comments"],
    ["ids"],
    ["early-hints"],
    ["cr", "bom", "multiline", "comments", "ids", "no-space"],
  ] as const)("%s", async (...protocol) => {
    for (const api of ["chat", "responses", "messages"] as const) {
      const m = await mock({ protocol: [...protocol] });
      const { r } = await one(m.url, { api }, 12);
      expect(r.error, `${api}: ${JSON.stringify(r.error)}`).toBeNull();
      expect(r.event_times_ms).toHaveLength(12);
      expect(r.usage?.completion_tokens).toBe(12);
      expect(r.server_event_times_ms).toHaveLength(12);
      expect(r.http_status).toBe(200);
    }
  });

  it("events after [DONE] are not counted, and the record says how many came", async () => {
    const m = await mock({ protocol: ["after-done"] });
    const { r } = await one(m.url, {}, 10);
    expect(r.error).toBeNull();
    expect(r.event_times_ms).toHaveLength(10);
    expect(r.events_after_done).toBe(1);
  });
});

describe("errors and impossible answers, with what was measured kept", () => {
  const fault = (kind: string) => mock({ faults: [{ kind: kind as never, rate: 1, every: null }] });
  it("an event: error frame is server_error_event with the server's message; the tokens before it are kept", async () => {
    const { r } = await one((await fault("error_event")).url, {}, 20);
    expect(r.error?.code).toBe("server_error_event");
    expect(r.error?.message).toMatch(/the model crashed mid-stream/);
    expect(r.event_times_ms.length).toBeGreaterThanOrEqual(9);
  });

  it("a 200 with a JSON error body is server_error_event with the server's message", async () => {
    const { r } = await one((await fault("error_body")).url, {}, 8);
    expect(r.http_status).toBe(200);
    expect(r.error?.code).toBe("server_error_event");
    expect(r.error?.message).toMatch(/the engine is overloaded/);
  });

  it("a server that ignores ignore_eos is short_output", async () => {
    const { r } = await one((await fault("early_stop")).url, {}, 20);
    expect(r.error).toBeNull();
    expect(r.usage?.completion_tokens).toBe(10);
    expect(r.short_output).toBe(true);
  });

  it("10^15 completion tokens are invalid_usage, the stream's own times kept", async () => {
    const { r } = await one((await fault("huge_usage")).url, {}, 8);
    expect(r.error?.code).toBe("invalid_usage");
    expect(r.event_times_ms).toHaveLength(8);
  });

  it("two choices in one stream are multiple_choices", async () => {
    const { r } = await one((await fault("two_choices")).url, {}, 8);
    expect(r.error?.code).toBe("multiple_choices");
  });
});
