/** The common gauges' and counters' names and help texts, per flavour, as each server spells them. */
import type { CoreMetricNames } from "./flavor.ts";

export const CORE_METRICS: Record<"vllm" | "sglang" | "freetoken" | "llamacpp", CoreMetricNames> = {
  vllm: {
    running: ["vllm:num_requests_running", "Number of requests in model execution batches."],
    waiting: ["vllm:num_requests_waiting", "Number of requests waiting to be processed."],
    kv: ["vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."],
    prompt: ["vllm:prompt_tokens_total", "Number of prefill tokens processed."],
    generation: ["vllm:generation_tokens_total", "Number of generation tokens processed."],
  },
  sglang: {
    running: ["sglang:num_running_reqs", "The number of running requests."],
    waiting: ["sglang:num_queue_reqs", "The number of requests in the waiting queue."],
    kv: ["sglang:token_usage", "The token usage."],
    prompt: ["sglang:prompt_tokens_total", "Number of prefill tokens processed."],
    generation: ["sglang:generation_tokens_total", "Number of generation tokens processed."],
  },
  freetoken: {
    running: ["freetoken:requests_running", "Requests being decoded."],
    waiting: ["freetoken:requests_waiting", "Requests waiting for a slot."],
    kv: ["freetoken:kv_cache_usage_ratio", "KV cache usage, 0..1."],
    prompt: ["freetoken:prompt_tokens_total", "Prompt tokens processed."],
    generation: ["freetoken:generation_tokens_total", "Tokens generated."],
  },
  llamacpp: {
    running: ["llamacpp:requests_processing", "Number of requests processing."],
    waiting: ["llamacpp:requests_deferred", "Number of requests deferred."],
    kv: ["llamacpp:kv_cache_usage_ratio", "KV-cache usage. 1 means 100 percent usage."],
    prompt: ["llamacpp:prompt_tokens_total", "Number of prompt tokens processed."],
    generation: ["llamacpp:tokens_predicted_total", "Number of generation tokens processed."],
  },
};
