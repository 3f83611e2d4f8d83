// The /metrics text: the Prometheus parser and what the sampler takes from a scrape.
import { describe, expect, it } from "vitest";
import { queueHistogram, toSample } from "../../../src/core/server/metrics-sampler.ts";
import { parsePrometheus } from "../../../src/core/server/prometheus.ts";

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
