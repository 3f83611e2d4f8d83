// The /metrics text: the Prometheus parser and what the sampler takes from a scrape.
import { describe, expect, it } from "vitest";
import { toSample } from "../../../src/core/server/metrics-sampler.ts";
import { parsePrometheus } from "../../../src/core/server/prometheus.ts";
import { combineSnapshots, histogramSnapshot } from "../../../src/core/server/server-histograms.ts";

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
    expect(histogramSnapshot(10, s).phases.queue).toEqual({ sum: 1.5, count: 3 });
  });

  it("reads each phase's histogram and vLLM's prefix-cache counters; several servers sum only what all have", () => {
    const scrape = (queue: number, extra = "") =>
      parsePrometheus(
        [
          `vllm:request_queue_time_seconds_sum{engine="0"} ${queue}`,
          'vllm:request_queue_time_seconds_count{engine="0"} 4',
          `vllm:request_queue_time_seconds_sum{engine="1"} ${queue}`,
          'vllm:request_queue_time_seconds_count{engine="1"} 4',
          "vllm:request_prefill_time_seconds_sum 0.8",
          "vllm:request_prefill_time_seconds_count 8",
          "vllm:prefix_cache_queries_total 1000",
          "vllm:prefix_cache_hits_total 250",
          extra,
        ].join("\n"),
      );
    const a = histogramSnapshot(
      5,
      scrape(0.5, "vllm:request_decode_time_seconds_sum 2\nvllm:request_decode_time_seconds_count 8"),
    );
    // label sets summed (two engines), each phase where its histogram is, the rest absent
    expect(a).toEqual({
      t_ms: 5,
      phases: { queue: { sum: 1, count: 8 }, prefill: { sum: 0.8, count: 8 }, decode: { sum: 2, count: 8 } },
      cache: { queries: 1000, hits: 250 },
    });
    const b = histogramSnapshot(5, scrape(1));
    const both = combineSnapshots(5, [a, b]);
    expect(both.phases).toEqual({ queue: { sum: 3, count: 16 }, prefill: { sum: 1.6, count: 16 } });
    expect(both.cache).toEqual({ queries: 2000, hits: 500 });
    // SGLang's TTFT and queue, no cache counters
    const sg = histogramSnapshot(
      0,
      parsePrometheus(
        "sglang:queue_time_seconds_sum 3\nsglang:queue_time_seconds_count 6\nsglang:time_to_first_token_seconds_sum 1.2\nsglang:time_to_first_token_seconds_count 6\n",
      ),
    );
    expect(sg).toEqual({
      t_ms: 0,
      phases: { queue: { sum: 3, count: 6 }, ttft: { sum: 1.2, count: 6 } },
      cache: null,
    });
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
