/** vLLM: /version, count_tokens, /tokenize with max_model_len, vllm:* metrics. */
import { type FlavorModule, plainHealth, standardLastEvents } from "../flavor.ts";

export const vllm: FlavorModule = {
  commonRoutes: true,
  roleChunkAtAdmission: false,
  omitCachedDetailsWhenZero: false,
  closeAfterStream: false,
  streamHeaders: {},
  metricLabels: (o) => ({ model_name: o.model }),
  health: plainHealth,
  get: (url) => (url === "/version" ? { version: "0.11.0+tokenbench.mock" } : undefined),
  post(url, body, promptOf, e) {
    if (url === "/v1/messages/count_tokens") return { input_tokens: promptOf(true).length };
    if (url === "/tokenize") {
      const toks = promptOf(body.messages !== undefined);
      return { count: toks.length, max_model_len: e.o.maxModelLen, tokens: toks.map((_, i) => i + 1) };
    }
    return undefined;
  },
  lastEvents: standardLastEvents,
  metrics(x, e) {
    x.metric(
      "vllm:num_requests_running",
      "gauge",
      "Number of requests in model execution batches.",
      e.running,
    );
    x.metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", e.waiting);
    x.metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", e.kvRatio());
    x.metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", e.promptTotal);
    x.metric(
      "vllm:generation_tokens_total",
      "counter",
      "Number of generation tokens processed.",
      e.generationTotal,
    );
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
    x.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", e.h.ttft);
    x.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", e.h.itl);
    x.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e.h.e2e);
    x.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase.", e.h.queue);
    x.histogram(
      "vllm:request_prefill_time_seconds",
      "Histogram of time spent in PREFILL phase.",
      e.h.prefill,
    );
  },
};
