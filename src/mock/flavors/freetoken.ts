/**
 * FreeToken: /health with loading progress, /v1/cache/status, /v1/stats with limits,
 * count_tokens; the role chunk goes out at admission, before prefill.
 */

import { coreMetrics, flavor, histograms } from "../flavor.ts";
import { messagesPrompt } from "../http.ts";
import { CORE_METRICS } from "../metric-names.ts";

export const freetoken = flavor({
  roleChunkAtAdmission: true,
  omitCachedDetailsWhenZero: true,
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
        server: { name: "freetoken", version: o.serverVersion ?? "0.9.0+tokenbench.mock" },
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
  post: (url, body) =>
    url === "/v1/messages/count_tokens" ? { input_tokens: messagesPrompt(body).length } : undefined,
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.freetoken);
    histograms(x, e, "freetoken:", {
      ttft: ["time_to_first_token_seconds", "Time to first token."],
      queue: ["request_queue_time_seconds", "Time spent waiting for a slot."],
    });
  },
});
