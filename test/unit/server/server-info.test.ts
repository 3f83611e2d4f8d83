import { describe, expect, it } from "vitest";
import {
  admissionSummary,
  meanInFlight,
  queueHistogram,
  toSample,
} from "../../../src/core/server/metrics-sampler.ts";
import { parsePrometheus } from "../../../src/core/server/prometheus.ts";
import { extractServerFacts } from "../../../src/core/server/snapshot.ts";
import { CONNECTION } from "../../../src/core/settings/table.ts";
import { rec } from "../../helpers/records.ts";

describe("Prometheus text parser", () => {
  const text = [
    "# HELP vllm:num_requests_running Number of requests.",
    "# TYPE vllm:num_requests_running gauge",
    'vllm:num_requests_running{engine="0",model_name="m"} 3',
    'vllm:num_requests_running{engine="1",model_name="m"} 2',
    'vllm:num_requests_waiting{model_name="m"} 1.0',
    'vllm:kv_cache_usage_perc{model_name="m"} 0.5',
    'vllm:request_queue_time_seconds_sum{model_name="m"} 1.5',
    'vllm:request_queue_time_seconds_count{model_name="m"} 3',
    'weird_label{path="a,b\\"c"} 7 1700000000000',
    "custom_total 12",
    "broken_line",
  ].join("\n");
  const s = parsePrometheus(text);

  it("reads names, labels (with escapes) and values; skips comments and junk", () => {
    expect(s.find((x) => x.name === "weird_label")).toEqual({
      name: "weird_label",
      labels: { path: 'a,b"c' },
      value: 7,
    });
    expect(s.filter((x) => x.name === "vllm:num_requests_running")).toHaveLength(2);
    expect(s.some((x) => x.name === "broken_line")).toBe(false);
  });

  it("maps engine names to running/waiting/KV (sums over label sets) and keeps unknown metrics raw", () => {
    const m = toSample(10, s);
    expect(m).toMatchObject({ t_ms: 10, running: 5, waiting: 1, kv_cache_usage_pct: 50 });
    expect(m.raw).toMatchObject({ custom_total: 12 });
    expect(Object.keys(m.raw!).some((k) => k.includes("queue_time_seconds"))).toBe(false);
    expect(queueHistogram(s)).toEqual({ sum: 1.5, count: 3 });
  });

  it("knows SGLang, llama.cpp, FreeToken and TGI names", () => {
    for (const [r, w] of [
      ["sglang:num_running_reqs", "sglang:num_queue_reqs"],
      ["llamacpp:requests_processing", "llamacpp:requests_deferred"],
      ["freetoken:requests_running", "freetoken:requests_waiting"],
      ["tgi_batch_current_size", "tgi_queue_size"],
    ]) {
      expect(toSample(0, parsePrometheus(`${r} 4\n${w} 2\n`))).toMatchObject({ running: 4, waiting: 2 });
    }
  });
});

describe("admission summary", () => {
  const level = {
    level: 4,
    mode: "closed" as const,
    wall_time_s: 1,
    peak_in_flight: 4,
    client: { bottleneck_warning: null },
  } as never;
  const records = [0, 1, 2, 3].map((i) => rec({ id: i, send_ms: 0, events: [100, 500], end_ms: 1000 }));

  it("computes the mean client in-flight count", () => {
    expect(meanInFlight(records)).toBeCloseTo(4, 9);
  });

  it("flags client-side queueing when the client holds more than the server reports, inside the steady window", () => {
    const input = {
      level,
      records,
      samples: [
        { t_ms: 0, running: 0, waiting: 0, kv_cache_usage_pct: 10 },
        { t_ms: 500, running: 1, waiting: 0, kv_cache_usage_pct: 10 },
      ],
      metricsAvailable: true,
      queueDelta: null,
      limits: { maxRunningRequests: null, cudaGraphMaxBs: null },
    };
    const a = admissionSummary({ ...input, window: { startMs: 100, endMs: 900 } });
    expect(a.bend_reasons).toContain("client_queueing");
    expect(a.littles_law!.implied_in_flight).toBeCloseTo(4, 9);
    // no steady window: no comparison (an idle start or end would fake one)
    expect(admissionSummary({ ...input, window: null }).bend_reasons).not.toContain("client_queueing");
  });

  it("no client-side queueing from the idle samples at a level's start and end", () => {
    // the server ran all 4 while the window lasted; its idle samples at 0 and 1000 are outside it
    const a = admissionSummary({
      level,
      records,
      samples: [
        { t_ms: 0, running: 0, waiting: 0, kv_cache_usage_pct: 0 },
        { t_ms: 500, running: 4, waiting: 0, kv_cache_usage_pct: 10 },
        { t_ms: 1000, running: 0, waiting: 0, kv_cache_usage_pct: 0 },
      ],
      metricsAvailable: true,
      queueDelta: null,
      limits: { maxRunningRequests: null, cudaGraphMaxBs: null },
      window: { startMs: 100, endMs: 900 },
    });
    expect(a.bend_reasons).not.toContain("client_queueing");
  });

  it("names a full KV cache", () => {
    const a = admissionSummary({
      level,
      records,
      samples: [{ t_ms: 0, running: 4, waiting: 0, kv_cache_usage_pct: 99 }],
      metricsAvailable: true,
      queueDelta: { sum: 0.4, count: 4 },
      limits: { maxRunningRequests: 8, cudaGraphMaxBs: null },
    });
    expect(a.bend_reasons).toEqual(["kv_full"]);
    expect(a.server_queue_time_mean_ms).toBeCloseTo(100, 9);
  });
});

describe("server facts", () => {
  it("extracts model, context, server, limits from each engine's endpoints", () => {
    expect(
      extractServerFacts(
        {
          "/v1/models": { data: [{ id: "m", max_model_len: 8192 }] },
          "/get_server_info": {
            version: "0.5",
            max_running_requests: 16,
            cuda_graph_max_bs: 8,
            context_length: 4096,
          },
        },
        null,
      ),
    ).toMatchObject({
      model_id: "m",
      server_name: "sglang",
      server_version: "0.5",
      context_length: 4096,
      max_running_requests: 16,
      cuda_graph_max_bs: 8,
    });
    expect(
      extractServerFacts(
        { "/props": { total_slots: 4, default_generation_settings: { n_ctx: 2048 }, build_info: "b1" } },
        null,
      ),
    ).toMatchObject({
      server_name: "llama.cpp",
      server_version: "b1",
      context_length: 2048,
      max_running_requests: 4,
    });
    expect(
      extractServerFacts({}, 'vllm:cache_config_info{block_size="16",num_gpu_blocks="2000"} 1'),
    ).toMatchObject({
      server_name: "vllm",
      kv_block_size: 16,
      kv_num_gpu_blocks: 2000,
    });
  });

  it("parses --server-limit", () => {
    expect(
      CONNECTION.serverLimits.parse(["max_running_requests=8", "note=fp8 kv"], "--server-limit"),
    ).toEqual({
      max_running_requests: 8,
      note: "fp8 kv",
    });
    expect(() => CONNECTION.serverLimits.parse(["oops"], "--server-limit")).toThrow(/key=value/);
  });
});
