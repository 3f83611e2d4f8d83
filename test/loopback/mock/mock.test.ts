// The mock's protocol, read with plain fetch and a naive splitter (not src/core), so a parsing
// bug in the harness cannot hide a bug in the mock.
import { afterEach, describe, expect, it } from "vitest";
import { countTokens, type MockOptions, parseFault } from "../../../src/mock/index.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

let servers: MockProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function mock(o: Partial<MockOptions> = {}): Promise<MockProcess> {
  const s = await startMock({ ttftMs: 5, itlMs: 1, ...o });
  servers.push(s);
  return s;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

async function sse(url: string, body: Record<string, unknown>) {
  const res = await post(url, {
    model: "mock-model",
    stream: true,
    stream_options: { include_usage: true },
    ...body,
  });
  const text = await res.text();
  const datas = text
    .split("\n\n")
    .filter((b) => b.startsWith("data: "))
    .map((b) => b.slice(6));
  return { res, text, datas, json: datas.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d)) };
}

// biome-ignore lint/suspicious/noExplicitAny: test reads arbitrary JSON
const jsonOf = async (r: Promise<Response>): Promise<any> => (await r).json();

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  messages: [{ role: "user", content }],
  ...extra,
});

describe("mock protocol", () => {
  it("chat stream: role chunk first, content, finish_reason, usage chunk, [DONE]", async () => {
    const m = await mock();
    const { res, datas, json } = await sse(
      `${m.url}/v1/chat/completions`,
      chat("Hello, world!", { max_tokens: 4, ignore_eos: true }),
    );
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(datas.at(-1)).toBe("[DONE]");
    expect(json[0].choices[0].delta.role).toBe("assistant");
    const content = json.filter((j) => j.choices[0]?.delta?.content);
    expect(content).toHaveLength(4);
    expect(content.at(-1).choices[0].finish_reason).toBe("length");
    const usage = json.at(-1);
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
  });

  it("completions stream and non-streaming responses", async () => {
    const m = await mock();
    const { json } = await sse(`${m.url}/v1/completions`, {
      prompt: "a b c",
      max_tokens: 3,
      ignore_eos: true,
    });
    expect(json.filter((j) => j.choices[0]?.text).length).toBe(3);
    const r = await post(`${m.url}/v1/chat/completions`, {
      model: "mock-model",
      ...chat("x y"),
      max_tokens: 5,
      ignore_eos: true,
    });
    const body = await jsonOf(Promise.resolve(r));
    expect(body.choices[0].message.content.trim().split(" ")).toHaveLength(5);
    expect(body.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5 });
  });

  it("without ignore_eos the length is drawn (seeded) and capped by max_tokens, finish_reason stop", async () => {
    const m = await mock({ meanOutputTokens: 4, seed: 3 });
    const lens: number[] = [];
    for (let i = 0; i < 12; i++) {
      const { json } = await sse(`${m.url}/v1/chat/completions`, chat("hi", { max_tokens: 50 }));
      const u = json.at(-1).usage.completion_tokens;
      lens.push(u);
      const fin = json.find((j) => j.choices[0]?.finish_reason)?.choices[0].finish_reason;
      expect(fin).toBe(u < 50 ? "stop" : "length");
    }
    expect(Math.max(...lens)).toBeLessThanOrEqual(50);
    expect(new Set(lens).size).toBeGreaterThan(1);
    const m2 = await mock({ meanOutputTokens: 4, seed: 3 });
    const again: number[] = [];
    for (let i = 0; i < 12; i++) {
      const { json } = await sse(`${m2.url}/v1/chat/completions`, chat("hi", { max_tokens: 50 }));
      again.push(json.at(-1).usage.completion_tokens);
    }
    expect(again).toEqual(lens);
  });

  it("tokenizer rule: count_tokens, /tokenize and usage.prompt_tokens agree", async () => {
    const m = await mock();
    const text = "The quick, brown fox: jumps over 12 lazy dogs!";
    expect(countTokens(text)).toBe(12);
    const ct = await (
      await post(`${m.url}/v1/messages/count_tokens`, { model: "mock-model", ...chat(text) })
    ).json();
    const tk = await jsonOf(post(`${m.url}/tokenize`, { model: "mock-model", prompt: text }));
    const { json } = await sse(`${m.url}/v1/chat/completions`, chat(text, { max_tokens: 1 }));
    expect(ct).toEqual({ input_tokens: 12 });
    expect(tk.count).toBe(12);
    expect(json.at(-1).usage.prompt_tokens).toBe(12);
  });

  it("bad requests get 400 with an OpenAI-style error body", async () => {
    const m = await mock();
    const bad = await fetch(`${m.url}/v1/chat/completions`, { method: "POST", body: "{not json" });
    expect(bad.status).toBe(400);
    expect((await jsonOf(Promise.resolve(bad))).error.message).toMatch(/not valid JSON/);
    const noMsgs = await post(`${m.url}/v1/chat/completions`, { model: "mock-model" });
    expect(noMsgs.status).toBe(400);
    const unknown = await post(`${m.url}/v1/chat/completions`, { model: "nope", ...chat("x") });
    expect(unknown.status).toBe(400);
    expect((await jsonOf(Promise.resolve(unknown))).error).toMatchObject({ type: "NotFoundError" });
    const noModel = await post(`${m.url}/v1/chat/completions`, chat("x"));
    expect(noModel.status).toBe(400);
  });

  it("prefix cache: a repeated prompt reports cached tokens in block multiples and skips prefill", async () => {
    const m = await mock({ ttftMs: 5, prefillMsPer1k: 200 });
    const prompt = Array.from({ length: 500 }, (_, i) => `w${i}`).join(" ");
    // the server's own record of each prefill: its histogram's sum, in seconds
    const prefillSumMs = async () => {
      const text = await (await fetch(`${m.url}/metrics`)).text();
      return 1000 * Number(/^vllm:request_prefill_time_seconds_sum(?:{[^}]*})? (\S+)$/m.exec(text)![1]);
    };
    const t0 = performance.now();
    const first = await sse(`${m.url}/v1/chat/completions`, chat(prompt, { max_tokens: 1 }));
    const t1 = performance.now();
    const afterFirst = await prefillSumMs();
    await sse(`${m.url}/v1/chat/completions`, chat(prompt, { max_tokens: 1 })).then((second) =>
      expect(second.json.at(-1).usage.prompt_tokens_details.cached_tokens).toBe(496),
    );
    expect(first.json.at(-1).usage.prompt_tokens_details.cached_tokens).toBe(0);
    // 5 ms + 0.2 ms for each of 500 uncached tokens, then for the 4 past the last whole block
    expect(afterFirst).toBeCloseTo(5 + 0.2 * 500, 6);
    expect((await prefillSumMs()) - afterFirst).toBeCloseTo(5 + 0.2 * 4, 6);
    // a timer never fires early: the first answer took at least its prefill (how much later the
    // second came is the machine's, not the mock's: a busy machine stalled it past 60 ms)
    expect(t1 - t0).toBeGreaterThan(105);
  });

  it("FreeToken and SGLang omit prompt_tokens_details when nothing was cached", async () => {
    for (const flavor of ["freetoken", "sglang"] as const) {
      const m = await mock({ flavor });
      const { json } = await sse(`${m.url}/v1/chat/completions`, chat("fresh words here", { max_tokens: 2 }));
      const usage = json
        .map((j) => j.usage)
        .filter(Boolean)
        .at(-1);
      expect(usage.prompt_tokens_details).toBeUndefined();
    }
  });

  it("server timestamps in chunks on request", async () => {
    const m = await mock();
    const res = await post(
      `${m.url}/v1/chat/completions`,
      { model: "mock-model", stream: true, ...chat("x"), max_tokens: 2, ignore_eos: true },
      { "x-tokenbench-server-ts": "1" },
    );
    const text = await res.text();
    const ts = [...text.matchAll(/"tokenbench_server_ts_ms":([0-9.]+)/g)].map((x) => Number(x[1]));
    expect(ts).toHaveLength(2);
    const now = Number(process.hrtime.bigint()) / 1e6;
    expect(now - ts[1]!).toBeGreaterThanOrEqual(0);
    expect(now - ts[1]!).toBeLessThan(1000);
  });
});

describe("mock capacity, queue and metrics", () => {
  it("queues beyond capacity (FIFO) and shows running/waiting in vLLM metrics", async () => {
    const m = await mock({ ttftMs: 100, itlMs: 10, capacity: 2 });
    const reqs = Array.from({ length: 5 }, () =>
      sse(`${m.url}/v1/chat/completions`, chat("q", { max_tokens: 5, ignore_eos: true })),
    );
    await new Promise((r) => setTimeout(r, 50));
    const metrics = await (await fetch(`${m.url}/metrics`)).text();
    expect(metrics).toMatch(/^vllm:num_requests_running\{model_name="mock-model"\} 2$/m);
    expect(metrics).toMatch(/^vllm:num_requests_waiting\{model_name="mock-model"\} 3$/m);
    await Promise.all(reqs);
    const after = await (await fetch(`${m.url}/metrics`)).text();
    expect(after).toMatch(/^vllm:num_requests_running\{model_name="mock-model"\} 0$/m);
    expect(after).toMatch(/^vllm:generation_tokens_total\{model_name="mock-model"\} 25$/m);
    expect(after).toMatch(/^vllm:request_queue_time_seconds_count\{model_name="mock-model"\} 5$/m);
    for (const name of [
      "vllm:kv_cache_usage_perc",
      "vllm:prompt_tokens_total",
      "vllm:num_preemptions_total",
      "vllm:time_to_first_token_seconds_bucket",
      "vllm:inter_token_latency_seconds_bucket",
      "vllm:e2e_request_latency_seconds_bucket",
    ]) {
      expect(after).toContain(name);
    }
  });

  it("rejects beyond --max-queue with the configured status", async () => {
    const m = await mock({ ttftMs: 200, capacity: 1, maxQueue: 1, rejectStatus: 429 });
    const body = { model: "mock-model", ...chat("x"), max_tokens: 1, stream: true };
    const a = post(`${m.url}/v1/chat/completions`, body);
    const b = post(`${m.url}/v1/chat/completions`, body);
    await new Promise((r) => setTimeout(r, 30));
    const c = await post(`${m.url}/v1/chat/completions`, body);
    expect(c.status).toBe(429);
    await (await a).text();
    await (await b).text();
  });

  it("KV budget drives usage and preemption", async () => {
    const m = await mock({ ttftMs: 5, itlMs: 2, capacity: 4, kvTokens: 60 });
    const prompt = Array.from({ length: 20 }, (_, i) => `k${i}`).join(" ");
    const reqs = Array.from({ length: 3 }, (_, i) =>
      sse(`${m.url}/v1/chat/completions`, chat(`${i} ${prompt}`, { max_tokens: 20, ignore_eos: true })),
    );
    const all = await Promise.all(reqs);
    for (const r of all) expect(r.json.at(-1).usage.completion_tokens).toBe(20);
    const metrics = await (await fetch(`${m.url}/metrics`)).text();
    const pre = Number(/^vllm:num_preemptions_total\{[^}]*\} (\d+)/m.exec(metrics)?.[1]);
    expect(pre).toBeGreaterThan(0);
  });

  it("itl grows with running requests when configured", async () => {
    // The mock's own record (server stamps): from a request's arrival to its last write. Its
    // timers never fire early and keep their schedule, so a busy machine can only lengthen it.
    const m = await mock({
      ttftMs: 1,
      itlMs: 5,
      capacity: 8,
      itlGrowthPerRunning: 0.5,
      serverTimestamps: true,
    });
    type Stamped = { arrival: number; writes: number[] };
    const stamps = (r: Awaited<ReturnType<typeof sse>>): Stamped => ({
      arrival: r.json.find((j) => typeof j.tokenbench_server_arrival_ts_ms === "number")!
        .tokenbench_server_arrival_ts_ms as number,
      writes: r.json.map((j) => j.tokenbench_server_ts_ms).filter((t): t is number => typeof t === "number"),
    });
    const serverMs = (s: Stamped) => s.writes[s.writes.length - 1]! - s.arrival;
    const body = chat("x", { max_tokens: 20, ignore_eos: true });
    const single = stamps(await sse(`${m.url}/v1/chat/completions`, body));
    const five = (
      await Promise.all(Array.from({ length: 5 }, () => sse(`${m.url}/v1/chat/completions`, body)))
    ).map(stamps);
    // alone: 1 + 19 x 5 = 96 ms planned
    expect(serverMs(single)).toBeGreaterThanOrEqual(96 - 1);
    // five running: ITL 5 x (1 + 0.5 x 4) = 15 ms, for the tokens scheduled once all five had
    // arrived and before any ended (the arrivals are a connection set-up apart, in which fewer
    // ran): over those gaps the mean is 15 ms, less what a late first write of them took off
    // (the mock's timers keep their schedule, so a late write shortens the gap after it)
    const late = (await m.stats()).lateness.max ?? 0;
    const allIn = Math.max(...five.map((s) => s.arrival));
    const firstEnd = Math.min(...five.map((s) => s.writes[s.writes.length - 1]!));
    let measured = 0;
    for (const s of five) {
      // the first write after the last arrival was scheduled before it: from the next one on
      const w = s.writes.filter((t) => t > allIn && t <= firstEnd).slice(1);
      if (w.length < 4) continue;
      measured++;
      expect((w[w.length - 1]! - w[0]!) / (w.length - 1)).toBeGreaterThanOrEqual(
        15 - late / (w.length - 1) - 0.5,
      );
    }
    expect(measured).toBeGreaterThanOrEqual(4);
    expect(serverMs(single)).toBeLessThan(Math.min(...five.map(serverMs)));
  });
});

describe("mock flavours", () => {
  it("vLLM: /health, /v1/models, /version", async () => {
    const m = await mock();
    expect((await fetch(`${m.url}/health`)).status).toBe(200);
    expect((await jsonOf(fetch(`${m.url}/v1/models`))).data[0].id).toBe("mock-model");
    expect((await jsonOf(fetch(`${m.url}/version`))).version).toContain("mock");
  });

  it("FreeToken: loading then serving, cache status and stats", async () => {
    const m = await mock({ flavor: "freetoken", loadTimeS: 0.3 });
    const h1 = await jsonOf(fetch(`${m.url}/health`));
    expect(h1).toMatchObject({ status: "loading", maintenance: "loading" });
    expect(h1.progress).toBeGreaterThanOrEqual(0);
    const busy = await post(`${m.url}/v1/chat/completions`, { model: "mock-model", ...chat("x") });
    expect(busy.status).toBe(503);
    await new Promise((r) => setTimeout(r, 350));
    expect(await jsonOf(fetch(`${m.url}/health`))).toEqual({ status: "ok", maintenance: "serving" });
    const cache = await jsonOf(fetch(`${m.url}/v1/cache/status`));
    expect(cache.prefix_cache.enabled).toBe(true);
    const stats = await jsonOf(fetch(`${m.url}/v1/stats`));
    expect(stats.server.name).toBe("freetoken");
    expect(stats.limits.max_running_requests).toBe(32);
    const metrics = await (await fetch(`${m.url}/metrics`)).text();
    expect(metrics).toContain("freetoken:requests_running");
  });

  it("SGLang: /get_server_info and sglang:* metrics; usage in the last content chunk", async () => {
    const m = await mock({ flavor: "sglang", capacity: 8, cudaGraphMaxBs: 8 });
    const info = await jsonOf(fetch(`${m.url}/get_server_info`));
    expect(info).toMatchObject({ max_running_requests: 8, cuda_graph_max_bs: 8 });
    expect(await (await fetch(`${m.url}/metrics`)).text()).toContain("sglang:num_queue_reqs");
    const { json } = await sse(
      `${m.url}/v1/chat/completions`,
      chat("x", { max_tokens: 2, ignore_eos: true }),
    );
    const last = json.at(-1);
    expect(last.choices[0].delta.content).toBeTruthy();
    expect(last.usage.completion_tokens).toBe(2);
  });

  it("llama.cpp: 503 while loading, /props, /slots, timings, connection closed after the stream", async () => {
    const m = await mock({ flavor: "llamacpp", loadTimeS: 0.2, capacity: 3 });
    expect((await fetch(`${m.url}/health`)).status).toBe(503);
    await new Promise((r) => setTimeout(r, 250));
    expect((await fetch(`${m.url}/health`)).status).toBe(200);
    expect((await jsonOf(fetch(`${m.url}/props`))).total_slots).toBe(3);
    expect(await jsonOf(fetch(`${m.url}/slots`))).toHaveLength(3);
    expect(await (await fetch(`${m.url}/metrics`)).text()).toContain("llamacpp:requests_processing");
    const { res, json } = await sse(
      `${m.url}/v1/chat/completions`,
      chat("x", { max_tokens: 3, ignore_eos: true }),
    );
    expect(res.headers.get("connection")).toBe("keep-alive");
    const last = json.at(-1);
    expect(last.timings.predicted_n).toBe(3);
    expect(last.usage.completion_tokens).toBe(3);
    expect(last.choices[0].finish_reason).toBe("length");
  });

  it("minimal: nothing but completions", async () => {
    const m = await mock({ flavor: "minimal" });
    expect((await fetch(`${m.url}/health`)).status).toBe(404);
    expect((await fetch(`${m.url}/v1/models`)).status).toBe(404);
    expect((await fetch(`${m.url}/metrics`)).status).toBe(404);
    const { json } = await sse(`${m.url}/v1/chat/completions`, chat("x", { max_tokens: 1 }));
    expect(json.at(-1).usage.completion_tokens).toBe(1);
  });
});

describe("mock faults", () => {
  it("parses fault specs and rejects bad ones", () => {
    expect(parseFault("http500:0.25")).toEqual({ kind: "http500", rate: 0.25, every: null });
    expect(parseFault("reset@3")).toEqual({ kind: "reset", rate: null, every: 3 });
    expect(() => parseFault("explode:1")).toThrow(/KIND/);
    expect(() => parseFault("reset:2")).toThrow(/rate/);
  });

  it("every Nth request gets the fault and each kind is counted in /metrics", async () => {
    const m = await mock({ faults: [parseFault("http503@2")] });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await post(`${m.url}/v1/chat/completions`, {
        model: "mock-model",
        ...chat("x"),
        max_tokens: 1,
      });
      statuses.push(r.status);
      await r.text();
    }
    expect(statuses).toEqual([200, 503, 200, 503]);
    expect(await (await fetch(`${m.url}/metrics`)).text()).toMatch(
      /tokenbench_mock_faults_total\{[^}]*kind="http503"\} 2/,
    );
  });

  it("seeded rate faults are reproducible", async () => {
    const pattern = async () => {
      const m = await mock({ faults: [parseFault("http500:0.5")], seed: 9 });
      const out: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await post(`${m.url}/v1/chat/completions`, {
          model: "mock-model",
          ...chat("x"),
          max_tokens: 1,
        });
        out.push(r.status);
        await r.text();
      }
      return out;
    };
    const a = await pattern();
    expect(a).toEqual(await pattern());
    expect(a).toContain(500);
    expect(a).toContain(200);
  });
});
