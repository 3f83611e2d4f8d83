/** SGLang: /get_server_info, /get_model_info, /tokenize; usage rides on the last content chunk. */
import { type FlavorModule, plainHealth } from "../flavor.ts";

export const sglang: FlavorModule = {
  commonRoutes: true,
  roleChunkAtAdmission: false,
  omitCachedDetailsWhenZero: true,
  closeAfterStream: false,
  streamHeaders: {},
  metricLabels: (o) => ({ model_name: o.model }),
  health: plainHealth,
  get(url, e) {
    const o = e.o;
    if (url === "/get_server_info")
      return {
        version: "0.5.0+tokenbench.mock",
        model_path: o.model,
        context_length: o.maxModelLen,
        max_running_requests: o.capacity,
        cuda_graph_max_bs: o.cudaGraphMaxBs,
        max_total_num_tokens: o.kvTokens || null,
        page_size: o.blockTokens,
        enable_prefix_caching: o.prefixCacheTokens > 0,
      };
    if (url === "/get_model_info") return { model_path: o.model, is_generation: true };
    return undefined;
  },
  post(url, body, promptOf, e) {
    if (url !== "/tokenize") return undefined;
    const toks = promptOf(body.messages !== undefined);
    return { count: toks.length, max_model_len: e.o.maxModelLen, tokens: toks.map((_, i) => i + 1) };
  },
  lastEvents: (c, s, text, finish) => c.content(text, finish, s.includeUsage ? s.usage : null),
  metrics(x, e) {
    x.metric("sglang:num_running_reqs", "gauge", "The number of running requests.", e.running);
    x.metric("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", e.waiting);
    x.metric("sglang:token_usage", "gauge", "The token usage.", e.kvRatio());
    x.metric("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", e.promptTotal);
    x.metric(
      "sglang:generation_tokens_total",
      "counter",
      "Number of generation tokens processed.",
      e.generationTotal,
    );
    const c = e.cache;
    x.metric(
      "sglang:cache_hit_rate",
      "gauge",
      "The prefix cache hit rate.",
      c.queryTokens ? c.hitTokens / c.queryTokens : 0,
    );
    x.histogram(
      "sglang:time_to_first_token_seconds",
      "Histogram of time to first token in seconds.",
      e.h.ttft,
    );
    x.histogram(
      "sglang:inter_token_latency_seconds",
      "Histogram of inter-token latency in seconds.",
      e.h.itl,
    );
    x.histogram(
      "sglang:e2e_request_latency_seconds",
      "Histogram of End-to-end request latency in seconds",
      e.h.e2e,
    );
    x.histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", e.h.queue);
  },
};
