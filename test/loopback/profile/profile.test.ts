import { afterEach, describe, expect, it } from "vitest";
import { defaultProfileConfig, runProfile } from "../../../src/core/profile/profile.ts";
import { ReadinessError, waitReady } from "../../../src/core/server/readiness.ts";
import { defaultSweepConfig } from "../../../src/core/sweep/config.ts";
import { runSweep } from "../../../src/core/sweep/sweep.ts";
import type { MockOptions } from "../../../src/mock/index.ts";
import { type ProfileConfig, parseResultDocument, type SweepConfig } from "../../../src/schema/v1.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";
import { rawServer } from "../../helpers/servers.ts";
import { contact, tgt } from "../../helpers/target.ts";

let servers: MockProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function mock(o: Partial<MockOptions>): Promise<MockProcess> {
  const s = await startMock({ ttftMs: 10, itlMs: 2, ...o });
  servers.push(s);
  return s;
}

const profileConfig = (over: Partial<ProfileConfig> = {}): ProfileConfig =>
  defaultProfileConfig({
    targets: [128, 512],
    repetitions: 2,
    decode_tokens: 16,
    suffix_tokens: 16,
    ready_timeout_s: 10,
    ...over,
  });

const profile = async (url: string, over: Partial<ProfileConfig> = {}) =>
  runProfile({
    pre: await contact(url, { model: null }),
    timeoutS: 30,
    config: profileConfig(over),
  });

describe("readiness", () => {
  it("FreeToken: waits through `loading` until `serving`", async () => {
    const m = await mock({ flavor: "freetoken", loadTimeS: 0.6 });
    const r = await waitReady(tgt(m.url, { model: null }), { timeoutS: 5, intervalMs: 50 });
    expect(r.ready).toBe(true);
    expect(r.waited_s).toBeGreaterThan(0.4);
    expect(r.probes.some((p) => p.includes("loading"))).toBe(true);
    expect(r.probes.at(-1)).toContain("serving");
  });

  it("llama.cpp: waits through 503 while loading", async () => {
    const m = await mock({ flavor: "llamacpp", loadTimeS: 0.4 });
    const r = await waitReady(tgt(m.url, { model: null }), { timeoutS: 5, intervalMs: 50 });
    expect(r.probes[0]).toBe("GET /health -> 503");
    expect(r.probes.at(-1)).toBe(`GET /health -> 200 {"status":"ok"}`);
  });

  it("no /health and no /v1/models: a 1-token completion decides", async () => {
    const m = await mock({ flavor: "minimal" });
    const r = await waitReady(tgt(m.url), { timeoutS: 5 });
    expect(r.ready).toBe(true);
    expect(r.probes).toEqual([
      "GET /health -> 404",
      "GET /v1/models -> 404",
      "POST /v1/chat/completions (max_tokens=1) -> 200",
    ]);
  });

  it("a server that never becomes ready: a clear error naming what was tried", async () => {
    const srv = await rawServer((_req, res) => {
      res.writeHead(503);
      res.end("busy");
    });
    const err = await waitReady(tgt(srv.url, { model: null }), { timeoutS: 0.3, intervalMs: 50 }).catch(
      (e: unknown) => e,
    );
    await srv.close();
    expect(err).toBeInstanceOf(ReadinessError);
    expect((err as ReadinessError).code).toBe("not_ready");
    expect((err as Error).message).toContain("GET /health -> 503");
  });
});

describe("tokenbench profile against the mock", () => {
  it("FreeToken: count_tokens calibration, TTFT ignores the early role chunk, prefix cache hit on identical", async () => {
    const m = await mock({ flavor: "freetoken", ttftMs: 30, prefillMsPer1k: 40, loadTimeS: 0.2 });
    const doc = parseResultDocument(await profile(m.url));
    const p = doc.profile!;
    expect(doc.kind).toBe("profile");
    expect(p.readiness.ready).toBe(true);
    expect(p.calibration.method).toBe("count_tokens");
    for (const t of p.calibration.targets) {
      expect(t.within_tolerance).toBe(true);
      expect(Math.abs(t.reached_tokens - t.target_tokens)).toBeLessThanOrEqual(4);
    }
    const prefill = p.samples.filter((s) => s.phase === "prefill");
    expect(prefill).toHaveLength(4);
    for (const s of prefill) {
      expect(s.error).toBeNull();
      // role chunk arrives at admission, the first token after 30 ms + prefill
      expect(s.client_wall_ttft_ms!).toBeGreaterThanOrEqual(30);
      expect(s.cached_tokens).toBe(0); // omitted by FreeToken when 0; known to mean 0 here
      expect(s.client_wall_effective_prefill_tps).toBeGreaterThan(0);
    }
    const fresh = p.samples.filter((s) => s.phase === "prefix_fresh");
    const ident = p.samples.filter((s) => s.phase === "prefix_identical");
    const suffix = p.samples.filter((s) => s.phase === "prefix_small_suffix");
    expect(fresh.map((s) => s.cached_tokens)).toEqual([0, 0]);
    for (const s of ident) expect(s.cached_tokens!).toBeGreaterThanOrEqual(s.prompt_tokens! - 16);
    for (const s of suffix) expect(s.cached_tokens!).toBeGreaterThanOrEqual(ident[0]!.cached_tokens! - 16);
    expect(suffix[0]!.prompt_tokens! - ident[0]!.prompt_tokens!).toBeGreaterThanOrEqual(12);
    expect(ident[0]!.client_wall_ttft_ms!).toBeLessThan(fresh[0]!.client_wall_ttft_ms!);
    expect(p.cached_tokens_reporting).toBe("omitted_when_zero");
    const decode = p.samples.filter((s) => s.phase === "decode");
    for (const s of decode) {
      expect(s.completion_tokens).toBe(16);
      // 2 ms ITL -> ~500 tok/s. On a busy machine the mock sends a late event together with the
      // ones already due, so the first-to-last span shrinks when the first event is late: the rate reads high, by
      // up to the lateness of the first event (a few ms of a 30 ms span), or low when the last one is late.
      expect(s.client_wall_decode_tps!).toBeGreaterThan(300);
      expect(s.client_wall_decode_tps!).toBeLessThan(1000);
    }
    expect(doc.server!.extracted).toMatchObject({
      server_name: "freetoken",
      max_running_requests: 32,
      model_id: "mock-model",
    });
    expect(doc.server!.endpoints["/props"]!.present).toBe(false);
    expect(doc.server!.endpoints["/v1/cache/status"]!.present).toBe(true);
    const summary = p.summary as { prefix_cache: { identical: { ttft_ratio_vs_fresh: number } } };
    expect(summary.prefix_cache.identical.ttft_ratio_vs_fresh).toBeLessThan(1);
  });

  it("llama.cpp: /tokenize calibration and /props limits", async () => {
    const m = await mock({ flavor: "llamacpp", capacity: 4 });
    const doc = await profile(m.url, { targets: [200], prefix_target: 200 });
    expect(doc.profile!.calibration.method).toBe("tokenize");
    expect(doc.profile!.calibration.targets[0]!.within_tolerance).toBe(true);
    expect(doc.server!.limits.max_running_requests).toBe(4);
  });

  it("a server with nothing but chat completions: usage-probe calibration, cached tokens reported", async () => {
    const m = await mock({ flavor: "minimal" });
    const doc = await runProfile({
      pre: await contact(m.url, { serverLimits: { max_running_requests: 8 } }),
      timeoutS: 30,
      config: profileConfig({ targets: [300], prefix_target: 300 }),
    });
    expect(doc.profile!.calibration.method).toBe("usage_probe");
    expect(doc.profile!.calibration.targets[0]!.within_tolerance).toBe(true);
    expect(doc.server!.limits).toEqual({ max_running_requests: 8 });
    expect(Object.values(doc.server!.endpoints).every((e) => !e.present)).toBe(true);
  });
});

const sweepConfig = (over: Partial<SweepConfig> = {}): SweepConfig =>
  defaultSweepConfig({
    levels: [8],
    requests_per_level: 16,
    prompt_tokens: 16,
    max_tokens: 20,
    timeout_s: 10,
    metrics_interval_ms: 25,
    ...over,
  });

const sweep = async (url: string, over: Partial<SweepConfig> = {}) =>
  runSweep({
    pre: await contact(url),
    records: "none",
    resume: false,
    out: null,
    config: sweepConfig(over),
  });

describe("admission-aware sweeps", () => {
  it("c8 offered to a 4-slot server: 4 admitted, 4 queued, scheduler cap named", async () => {
    const m = await mock({ flavor: "sglang", capacity: 4, cudaGraphMaxBs: 4, ttftMs: 20, itlMs: 5 });
    // 64 requests: about 2 s, a steady window to diagnose the bend in
    const doc = await sweep(m.url, { requests_per_level: 64 });
    const a = doc.levels[0]!.admission!;
    expect(doc.levels[0]!.steady_state!.steady, doc.levels[0]!.steady_state!.reason).toBe(true);
    expect(a.observable).toBe(true);
    expect(a.source).toBe("metrics");
    expect(a.offered_concurrency).toBe(8);
    expect(a.max_running_requests).toBe(4);
    expect(a.cuda_graph_max_bs).toBe(4);
    expect(a.admitted_concurrency_max).toBe(4);
    // 4 wait all the time; for one scheduler step after slots free, the finished users' next
    // requests wait too (the 4 running requests started together and finish together: up to 8).
    expect(a.queued_requests_max).toBeGreaterThanOrEqual(4);
    expect(a.queued_requests_max).toBeLessThanOrEqual(8);
    expect(a.bend_reasons).toContain("server_queue");
    expect(a.bend_reasons).toContain("scheduler_cap");
    expect(a.littles_law!.implied_in_flight!).toBeGreaterThan(6);
    expect(doc.levels[0]!.metrics_timeline!.length).toBeGreaterThan(3);
    expect(doc.server!.extracted.server_name).toBe("sglang");
  });

  it("c4 on 8 slots: all admitted, nobody queued", async () => {
    const m = await mock({ flavor: "vllm", capacity: 8, ttftMs: 20, itlMs: 5 });
    const doc = await sweep(m.url, { levels: [4] });
    const a = doc.levels[0]!.admission!;
    expect(a.admitted_concurrency_max).toBe(4);
    expect(a.queued_requests_max).toBe(0);
    expect(a.bend_reasons).not.toContain("server_queue");
    expect(a.server_queue_time_mean_ms).not.toBeNull();
  });

  it("no client-side queueing where the mock queued nothing: the idle start and end of a level are outside its window", async () => {
    // 4 users on 8 slots, sampled every 10 ms: the samples before the first request and after the
    // last one show nobody running, and averaged in they once faked a client-side queue
    const m = await mock({ flavor: "vllm", capacity: 8, ttftMs: 20, itlMs: 5 });
    for (const levels of [[4], [1, 4]]) {
      const doc = await sweep(m.url, { levels, requests_per_level: 64, metrics_interval_ms: 10 });
      for (const l of doc.levels) {
        // steady, so the comparison was made (a level without a window is not compared at all)
        expect(l.steady_state!.steady, l.steady_state!.reason).toBe(true);
        expect(l.admission!.queued_requests_max).toBe(0);
        // (a client the self-check finds overloaded is named for that, on a busy machine)
        if (l.client.bottleneck_warning === null)
          expect(l.admission!.bend_reasons, l.notices.join("; ")).not.toContain("client_queueing");
        expect(l.notices.join("; ")).not.toMatch(/client-side queueing/);
      }
    }
  });

  it("a server without /metrics yields `not observable`, not zeros", async () => {
    const m = await mock({ flavor: "minimal", capacity: 2 });
    const doc = await sweep(m.url, { levels: [4] });
    const a = doc.levels[0]!.admission!;
    expect(a.observable).toBe(false);
    expect(a.source).toBe("none");
    expect(a.admitted_concurrency_max).toBeNull();
    expect(a.queued_requests_max).toBeNull();
    expect(a.metrics_samples).toBe(0);
    expect(a.notes.join(" ")).toMatch(/not observable/);
  });
});
