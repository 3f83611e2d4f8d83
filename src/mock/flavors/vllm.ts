/** vLLM: /version, count_tokens, /tokenize with max_model_len, /reset_prefix_cache, vllm:* metrics. */

import { coreMetrics, flavor, histograms } from "../flavor.ts";
import { messagesPrompt } from "../http.ts";
import { CORE_METRICS } from "../metric-names.ts";

export const vllm = flavor({
  get: (url, e) =>
    url === "/version" ? { version: e.o.serverVersion ?? "0.11.0+tokenbench.mock" } : undefined,
  post(url, body, promptOf, e) {
    if (url === "/v1/messages/count_tokens") return { input_tokens: messagesPrompt(body).length };
    if (url === "/reset_prefix_cache") return { reset: e.cache.clear() > 0 };
    if (url !== "/tokenize") return undefined;
    const toks = promptOf(body.messages !== undefined);
    return { count: toks.length, max_model_len: e.o.maxModelLen, tokens: toks.map((_, i) => i + 1) };
  },
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.vllm);
    x.metric(
      "vllm:num_preemptions_total",
      "counter",
      "Cumulative number of preemption from the engine.",
      e.preemptions,
    );
    x.metric(
      "vllm:prefix_cache_queries_total",
      "counter",
      "Prefix cache queries, in tokens.",
      e.cache.queryTokens,
    );
    x.metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in tokens.", e.cache.hitTokens);
    x.metric("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", 1, {
      block_size: String(e.o.blockTokens),
      enable_prefix_caching: String(e.o.prefixCacheTokens > 0),
    });
    histograms(x, e, "vllm:", {
      ttft: ["time_to_first_token_seconds", "Histogram of time to first token in seconds."],
      itl: ["inter_token_latency_seconds", "Histogram of inter-token latency in seconds."],
      e2e: ["e2e_request_latency_seconds", "Histogram of e2e request latency in seconds."],
      queue: ["request_queue_time_seconds", "Histogram of time spent in WAITING phase."],
      prefill: ["request_prefill_time_seconds", "Histogram of time spent in PREFILL phase."],
      decode: ["request_decode_time_seconds", "Histogram of time spent in DECODE phase."],
    });
  },
});
