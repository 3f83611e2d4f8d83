/** SGLang: /get_server_info, /get_model_info, /tokenize, /flush_cache; usage rides on the last content chunk. */

import { coreMetrics, flavor, histograms } from "../flavor.ts";
import { CORE_METRICS } from "../metric-names.ts";

export const sglang = flavor({
  omitCachedDetailsWhenZero: true,
  get(url, e) {
    const o = e.o;
    if (url === "/get_model_info") return { model_path: o.model, is_generation: true };
    if (url !== "/get_server_info") return undefined;
    return {
      version: o.serverVersion ?? "0.5.0+tokenbench.mock",
      model_path: o.model,
      context_length: o.maxModelLen,
      max_running_requests: o.capacity,
      cuda_graph_max_bs: o.cudaGraphMaxBs,
      max_total_num_tokens: o.kvTokens || null,
      page_size: o.blockTokens,
      enable_prefix_caching: o.prefixCacheTokens > 0,
    };
  },
  post(url, body, promptOf, e) {
    if (url === "/flush_cache") return { flushed_tokens: e.cache.clear() };
    if (url !== "/tokenize") return undefined;
    const toks = promptOf(body.messages !== undefined);
    return { count: toks.length, max_model_len: e.o.maxModelLen, tokens: toks.map((_, i) => i + 1) };
  },
  lastEvents: (c, s, piece, finish) => c.content(piece, finish, s.includeUsage ? s.usage : null),
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.sglang);
    const c = e.cache;
    x.metric(
      "sglang:cache_hit_rate",
      "gauge",
      "The prefix cache hit rate.",
      c.queryTokens ? c.hitTokens / c.queryTokens : 0,
    );
    histograms(x, e, "sglang:", {
      ttft: ["time_to_first_token_seconds", "Histogram of time to first token in seconds."],
      itl: ["inter_token_latency_seconds", "Histogram of inter-token latency in seconds."],
      e2e: ["e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds"],
      queue: ["queue_time_seconds", "Histogram of queueing time in seconds."],
    });
  },
});
