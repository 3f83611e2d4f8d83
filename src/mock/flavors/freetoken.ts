/**
 * FreeToken: /health with loading progress, /v1/cache/status, /v1/stats with limits,
 * count_tokens; the role chunk goes out at admission, before prefill.
 */
import { type FlavorModule, standardLastEvents } from "../flavor.ts";

export const freetoken: FlavorModule = {
  commonRoutes: true,
  roleChunkAtAdmission: true,
  omitCachedDetailsWhenZero: true,
  closeAfterStream: false,
  streamHeaders: {},
  metricLabels: (o) => ({ model_name: o.model }),
  health(e) {
    if (!e.loading()) return { status: 200, body: { status: "ok", maintenance: "serving" } };
    const progress = Math.min(1, (performance.now() - e.startedAtMs) / 1000 / Math.max(e.o.loadTimeS, 1e-9));
    return { status: 200, body: { status: "loading", maintenance: "loading", progress } };
  },
  get(url, e) {
    const o = e.o;
    if (url === "/v1/cache/status") {
      const c = e.cache;
      return {
        prefix_cache: {
          enabled: o.prefixCacheTokens > 0,
          capacity_tokens: o.prefixCacheTokens,
          used_tokens: c.usedTokens,
          block_tokens: o.blockTokens,
          hits: c.hits,
          queries: c.queries,
          hit_rate: c.queryTokens ? c.hitTokens / c.queryTokens : 0,
        },
        kv_cache: { budget_tokens: o.kvTokens || null, used_tokens: e.kvUsed(), block_tokens: o.blockTokens },
        reports_cached_tokens: true,
      };
    }
    if (url === "/v1/stats")
      return {
        server: { name: "freetoken", version: "0.9.0+tokenbench.mock" },
        model: { id: o.model, context_length: o.maxModelLen },
        gpus: [{ name: "Mock GPU", vram_mib: 0 }],
        requests_running: e.running,
        requests_waiting: e.waiting,
        requests_total: e.requestsTotal,
        limits: {
          max_running_requests: o.capacity,
          cuda_graph_max_bs: o.cudaGraphMaxBs,
          max_total_num_tokens: o.kvTokens || null,
        },
      };
    return undefined;
  },
  post: (url, _body, promptOf) =>
    url === "/v1/messages/count_tokens" ? { input_tokens: promptOf(true).length } : undefined,
  lastEvents: standardLastEvents,
  metrics(x, e) {
    x.metric("freetoken:requests_running", "gauge", "Requests being decoded.", e.running);
    x.metric("freetoken:requests_waiting", "gauge", "Requests waiting for a slot.", e.waiting);
    x.metric("freetoken:kv_cache_usage_ratio", "gauge", "KV cache usage, 0..1.", e.kvRatio());
    x.metric("freetoken:prompt_tokens_total", "counter", "Prompt tokens processed.", e.promptTotal);
    x.metric("freetoken:generation_tokens_total", "counter", "Tokens generated.", e.generationTotal);
    x.histogram("freetoken:time_to_first_token_seconds", "Time to first token.", e.h.ttft);
    x.histogram("freetoken:request_queue_time_seconds", "Time spent waiting for a slot.", e.h.queue);
  },
};
