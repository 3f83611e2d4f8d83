/**
 * llama.cpp: /props and /slots (and a slot's erase), /tokenize of `content`, 503 while loading, a final chunk with
 * `timings`, and the connection closed after each stream although keep-alive was advertised.
 */

import { coreMetrics, flavor } from "../flavor.ts";
import { CORE_METRICS } from "../metric-names.ts";
import { tokenize } from "../tokenizer.ts";

export const llamacpp = flavor({
  closeAfterStream: true,
  streamHeaders: { connection: "keep-alive" },
  metricLabels: () => ({}),
  health: (e) =>
    e.loading()
      ? { status: 503, body: null, error: "Loading model" }
      : { status: 200, body: { status: "ok" } },
  get(url, e) {
    const o = e.o;
    if (url === "/props")
      return {
        default_generation_settings: { n_ctx: o.maxModelLen, params: { n_predict: -1 } },
        total_slots: o.capacity,
        model_path: `/models/${o.model}.gguf`,
        build_info: "b0000-tokenbench-mock",
      };
    if (url === "/slots")
      return Array.from({ length: o.capacity }, (_, i) => ({
        id: i,
        n_ctx: o.maxModelLen,
        is_processing: i < e.running,
      }));
    return undefined;
  },
  post(url, body, _promptOf, e) {
    // a slot's erase (its query, ?action=erase, is not read): the mock's one cache is every slot's
    const slot = /^\/slots\/(\d+)$/.exec(url);
    if (slot) return { id_slot: Number(slot[1]), n_erased: e.cache.clear() };
    if (url !== "/tokenize") return undefined;
    const content = typeof body.content === "string" ? body.content : "";
    return { tokens: tokenize(content).map((_, i) => i + 1) };
  },
  lastEvents(c, s, piece, finish) {
    const timings = JSON.stringify({
      cache_n: s.cachedTokens,
      prompt_n: s.promptTokens - s.cachedTokens,
      prompt_ms: s.tFirst - s.tAdmit,
      predicted_n: s.emitted,
      predicted_ms: s.now - s.tFirst,
    });
    let fin = `data: ${c.prefix}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"${finish}"}]`;
    if (s.includeUsage) fin += `,"usage":${s.usage}`;
    return `${c.content(piece, null, null)}${fin},"timings":${timings}}\n\n`;
  },
  metrics(x, e) {
    coreMetrics(x, e, CORE_METRICS.llamacpp);
    x.metric("llamacpp:kv_cache_tokens", "gauge", "KV-cache tokens.", e.kvUsed());
  },
});
