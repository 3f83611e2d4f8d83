import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deriveRequest } from "../../../src/core/results/metrics.ts";
import type { RequestRecord } from "../../../src/schema/v1.ts";
import {
  allowanceMs,
  expectReadOnTime,
  serverGapsMs,
  serverTtftMs,
  watched,
} from "../../helpers/lateness.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";
import { client, rawServer, spec } from "../../helpers/servers.ts";

describe("streaming client against the mock (real sockets)", () => {
  let mock: MockProcess;
  beforeAll(async () => {
    mock = await startMock({ ttftMs: 40, itlMs: 10, capacity: 64, serverTimestamps: true });
  });
  afterAll(() => mock.close());

  it("TTFT, ITL and TPOT agree with the server's own record of each request, within the client's measured lateness", async () => {
    const c = client(mock.url);
    // Warm the JIT and the connections first: cold-start cost is real but not what this checks.
    await Promise.all(Array.from({ length: 8 }, () => c.stream(spec({ maxTokens: 2 }))));
    const { value: recs, check } = await watched(() =>
      Promise.all(Array.from({ length: 8 }, () => c.stream(spec({ maxTokens: 12 })))),
    );
    await c.close();
    for (const r of recs) {
      expect(r.error).toBeNull();
      expect(r.usage?.completion_tokens).toBe(12);
      expect(r.event_times_ms).toHaveLength(12);
      expect(r.finish_reason).toBe("length");
    }
    const late = allowanceMs(check);
    const tpotOff: number[] = [];
    for (const r of recs) {
      // the mock held the first token its configured 40 ms at least, by its own record
      expect(serverTtftMs(r)).toBeGreaterThanOrEqual(40 - 0.5);
      // the client's TTFT holds the server's: it sent before the server read, and read after it wrote
      expect(deriveRequest(r).ttftMs!).toBeGreaterThanOrEqual(serverTtftMs(r) - 0.5);
      // each gap the client saw is the server's, give or take how late it read either end
      const gaps = r.event_times_ms.slice(1).map((t, i) => t - r.event_times_ms[i]!);
      const off = gaps.map((g, i) => Math.abs(g - serverGapsMs(r)[i]!)).sort((a, b) => a - b);
      expect(off[Math.floor(off.length / 2)]!).toBeLessThanOrEqual(late + 0.5);
      // TPOT: (last - first) / (n - 1) on either clock, apart by how late the client read the
      // first and the last event, over n - 1
      const sv = r.server_event_times_ms!;
      tpotOff.push(Math.abs(deriveRequest(r).tpotMs! - (sv[sv.length - 1]! - sv[0]!) / (sv.length - 1)));
    }
    // a typical request's: one read of the two may meet a stall the self-check's sampling missed
    tpotOff.sort((a, b) => a - b);
    expect(tpotOff[Math.floor(tpotOff.length / 2)]!).toBeLessThanOrEqual((late + 0.5) / 11 + 0.05);
    expectReadOnTime(recs, check);
  });

  it("completions API works too", async () => {
    const c = client(mock.url, { api: "completions" });
    const r = await c.stream(spec({ maxTokens: 5 }));
    await c.close();
    expect(r.error).toBeNull();
    expect(r.event_times_ms).toHaveLength(5);
    expect(r.usage?.prompt_tokens).toBe(7);
  });

  it("sends extra body, API key and custom headers", async () => {
    let seen: { auth?: string; x?: string; body?: Record<string, unknown> } = {};
    const srv = await rawServer((req, res) => {
      let b = "";
      req.on("data", (d) => {
        b += d;
      });
      req.on("end", () => {
        seen = { auth: req.headers.authorization, x: req.headers["x-team"] as string, body: JSON.parse(b) };
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\ndata: [DONE]\n\n',
        );
      });
    });
    const c = client(srv.url, {
      apiKey: "sk-test",
      headers: { "x-team": "infra" },
      extraBody: { chat_template_kwargs: { enable_thinking: false } },
    });
    const r = await c.stream(spec({ maxTokens: 3 }));
    await c.close();
    await srv.close();
    expect(r.error).toBeNull();
    expect(seen.auth).toBe("Bearer sk-test");
    expect(seen.x).toBe("infra");
    expect(seen.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 3,
      temperature: 0,
      ignore_eos: true,
      chat_template_kwargs: { enable_thinking: false },
    });
  });

  it("speculative-style chunks: TPOT divides by usage, not by events", async () => {
    const m = await startMock({ ttftMs: 10, itlMs: 15, tokensPerChunk: 3 });
    const c = client(m.url);
    const r = await c.stream(spec({ maxTokens: 12 }));
    await c.close();
    await m.close();
    expect(r.usage?.completion_tokens).toBe(12);
    expect(r.event_times_ms).toHaveLength(4);
    const d = deriveRequest(r);
    expect(d.tokensPerChunk).toBe(3);
    // the 3 gaps between the 4 events spread over the 11 tokens after the first, not over 3 events
    const t = r.event_times_ms;
    expect(d.tpotMs!).toBeCloseTo((t[3]! - t[0]!) / 11, 9);
  });

  it("FreeToken's early role chunk never counts as the first token", async () => {
    const m = await startMock({ flavor: "freetoken", ttftMs: 60, itlMs: 5 });
    const c = client(m.url);
    const r = await c.stream(spec({ maxTokens: 3 }));
    await c.close();
    await m.close();
    expect(r.error).toBeNull();
    expect(r.event_count).toBe(5); // role + 3 content + usage
    expect(deriveRequest(r).ttftMs!).toBeGreaterThanOrEqual(60);
  });

  it("llama.cpp closes the connection after every stream; the client copes", async () => {
    const m = await startMock({ flavor: "llamacpp", ttftMs: 5, itlMs: 1 });
    const c = client(m.url);
    for (let i = 0; i < 5; i++) {
      const r = await c.stream(spec({ maxTokens: 4 }));
      expect(r.error).toBeNull();
      expect(r.usage?.completion_tokens).toBe(4);
    }
    await c.close();
    await m.close();
  });
});

describe("bad input becomes a recorded error with a stable code", () => {
  const faultCase = async (fault: string, extra: Record<string, unknown> = {}, timeoutS = 10) => {
    const m = await startMock({
      ttftMs: 5,
      itlMs: 2,
      faults: [{ kind: fault as never, rate: null, every: 1 }],
      ...extra,
    });
    const c = client(m.url, { timeoutS });
    const r = await c.stream(spec({ maxTokens: 10 }));
    await c.close();
    await m.close();
    return r;
  };

  it("unreachable server -> connect_failed", async () => {
    const srv = await rawServer(() => {});
    const url = srv.url;
    await srv.close();
    const c = client(url);
    const r = await c.stream(spec());
    await c.close();
    expect(r.error?.code).toBe("connect_failed");
    expect(r.http_status).toBeNull();
  });

  it("HTTP 500 / 429 -> http_error with the status", async () => {
    const r = await faultCase("http500");
    expect(r.error?.code).toBe("http_error");
    expect(r.http_status).toBe(500);
    expect(r.error?.message).toContain("injected fault");
    const r2 = await faultCase("http429");
    expect(r2.http_status).toBe(429);
  });

  it("a non-SSE body -> not_sse", async () => {
    const srv = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"choices":[{"message":{"content":"hi"}}]}');
    });
    const c = client(srv.url);
    const r = await c.stream(spec());
    await c.close();
    await srv.close();
    expect(r.error?.code).toBe("not_sse");
    expect(r.error?.message).toContain("application/json");
  });

  it("a malformed JSON chunk -> malformed_chunk, timestamps kept", async () => {
    const r = await faultCase("malformed");
    expect(r.error?.code).toBe("malformed_chunk");
    expect(r.event_times_ms.length).toBe(10);
    expect(r.first_token_ms).not.toBeNull();
  });

  it("a connection reset mid-stream -> connection_reset, tokens so far kept", async () => {
    const r = await faultCase("reset");
    expect(r.error?.code).toBe("connection_reset");
    expect(r.event_times_ms.length).toBe(5);
  });

  it("a stream without usage -> missing_usage", async () => {
    const r = await faultCase("no_usage");
    expect(r.error?.code).toBe("missing_usage");
    expect(r.event_times_ms.length).toBe(10);
  });

  it("a stream without [DONE] -> missing_done", async () => {
    const r = await faultCase("no_done");
    expect(r.error?.code).toBe("missing_done");
    expect(r.usage?.completion_tokens).toBe(10);
  });

  it("a stall past --timeout-s -> timeout, tokens so far kept", async () => {
    const r = await faultCase("stall", { stallS: 5 }, 0.5);
    expect(r.error?.code).toBe("timeout");
    expect(r.event_times_ms.length).toBe(5);
    expect(r.end_ms! - r.send_ms).toBeLessThan(2000);
  });

  it("a JSON error object mid-stream -> server_error_event", async () => {
    const srv = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"error":{"message":"CUDA out of memory","code":500}}\n\ndata: [DONE]\n\n',
      );
    });
    const c = client(srv.url);
    const r = await c.stream(spec());
    await c.close();
    await srv.close();
    expect(r.error).toEqual({ code: "server_error_event", message: "CUDA out of memory" });
    expect(r.event_times_ms).toHaveLength(1);
  });

  it("a slow first byte shows in TTFT and headers time", async () => {
    const r = await faultCase("slow_first_byte", { slowFirstByteMs: 300 });
    expect(r.error).toBeNull();
    expect(r.headers_ms! - r.send_ms).toBeGreaterThanOrEqual(295);
    expect(deriveRequest(r).ttftMs!).toBeGreaterThanOrEqual(300);
  });
});

describe("connections the server closes after every stream", () => {
  it("no request is lost: a stale kept-alive connection is retried once, then connections are not reused", async () => {
    const m = await startMock({ flavor: "llamacpp", ttftMs: 2, itlMs: 1, capacity: 8 });
    const c = client(m.url);
    const records: RequestRecord[] = [];
    let next = 0;
    const user = async () => {
      while (next < 300) {
        next++;
        records.push(await c.stream(spec({ maxTokens: 4 })));
        await new Promise((r) => setImmediate(r));
      }
    };
    await Promise.all(Array.from({ length: 4 }, user));
    await c.close();
    await m.close();
    expect(records).toHaveLength(300);
    expect(records.filter((r) => r.error !== null).map((r) => r.error)).toEqual([]);
    const resent = records.filter((r) => r.retries !== undefined);
    expect(resent.every((r) => r.retries! >= 1 && r.send_ms >= r.dispatch_ms!)).toBe(true);
    expect(c.reuseConnections).toBe(resent.length === 0);
    expect(c.staleRetries).toBe(resent.reduce((n, r) => n + r.retries!, 0));
  });
});
