/**
 * Flags of the benchmark clients users arrive from (vLLM's `vllm bench serve`, NVIDIA AIPerf,
 * guidellm), answered with the tokenbench flag that does that, and how it differs, instead of
 * only "unknown flag". Declarations only; argv.ts looks a name up here when a command does not
 * know it.
 */
export const FOREIGN_FLAGS: Readonly<Record<string, { from: string; answer: string }>> = {
  concurrency: {
    from: "AIPerf, guidellm",
    answer:
      "--levels 1,8,32 (closed loop, the default --mode: that many users each keep one request in flight; a list, one level each)",
  },
  "max-concurrency": {
    from: "vLLM bench serve",
    answer:
      "--levels N for N users in a closed loop (a list, one level each); with --mode open, --max-in-flight N caps the requests in flight",
  },
  "request-rate": {
    from: "vLLM bench serve, AIPerf",
    answer:
      "--mode open --levels R1,R2 (requests per second, a list, one level each; --arrival poisson|gamma|constant)",
  },
  rate: { from: "guidellm", answer: "--levels (a list: users for --mode closed, req/s for --mode open)" },
  "rate-type": {
    from: "guidellm",
    answer:
      "--mode: synchronous is --levels 1, concurrent is --mode closed, constant/poisson is --mode open --arrival constant|poisson, sweep is --mode search",
  },
  "num-prompts": { from: "vLLM bench serve", answer: "--requests N (per level)" },
  "request-count": { from: "AIPerf", answer: "--requests N (per level)" },
  "max-requests": { from: "guidellm", answer: "--requests N (per level)" },
  "max-seconds": {
    from: "guidellm",
    answer: "--duration S (per level; with --requests, whichever ends first)",
  },
  "benchmark-duration": { from: "AIPerf", answer: "--duration S (per level)" },
  "random-input-len": {
    from: "vLLM bench serve",
    answer:
      "--prompt-tokens N (calibrated against the server's own token count unless --calibrate-prompts false)",
  },
  "synthetic-input-tokens-mean": { from: "AIPerf", answer: "--prompt-tokens N" },
  "random-output-len": {
    from: "vLLM bench serve",
    answer: "--max-tokens N (with --ignore-eos, the default, each request generates exactly N)",
  },
  "output-tokens-mean": { from: "AIPerf", answer: "--max-tokens N" },
  "random-prefix-len": {
    from: "vLLM bench serve",
    answer: "--shared-prefix-tokens N (with --prefix-groups G)",
  },
  "dataset-name": {
    from: "vLLM bench serve",
    answer: "--dataset FILE (JSONL of prompts, or ShareGPT JSON); synthetic prompts need no flag",
  },
  "dataset-path": { from: "vLLM bench serve", answer: "--dataset FILE" },
  data: {
    from: "guidellm",
    answer: "--dataset FILE, or --prompt-tokens N --max-tokens M for synthetic prompts",
  },
  "input-file": { from: "AIPerf", answer: "--dataset FILE, or --trace FILE to replay timestamps" },
  backend: { from: "vLLM bench serve", answer: "--api chat|completions" },
  "endpoint-type": { from: "AIPerf", answer: "--api chat|completions" },
  endpoint: {
    from: "vLLM bench serve, AIPerf",
    answer: "--base-url http://host:port (the /v1/... path follows --api)",
  },
  url: { from: "AIPerf", answer: "--base-url http://host:port" },
  target: { from: "guidellm", answer: "--base-url http://host:port" },
  host: { from: "vLLM bench serve", answer: "--base-url http://host:port" },
  port: { from: "vLLM bench serve", answer: "--base-url http://host:port" },
  "save-result": {
    from: "vLLM bench serve",
    answer: "--out FILE.json (always written, with every request's raw timestamps)",
  },
  "result-filename": { from: "vLLM bench serve", answer: "--out FILE.json" },
  "result-dir": { from: "vLLM bench serve", answer: "--out DIR/FILE.json" },
  "output-path": { from: "guidellm", answer: "--out FILE.json" },
  "artifact-dir": { from: "AIPerf", answer: "--out DIR/FILE.json" },
  goodput: {
    from: "vLLM bench serve",
    answer: "--slo-ttft-ms, --slo-tpot-ms, --slo-e2e-ms (goodput counts requests within all given)",
  },
  "percentile-metrics": {
    from: "vLLM bench serve",
    answer: "nothing: p50, p90, p95 and p99 of every latency are always recorded",
  },
  "metric-percentiles": {
    from: "vLLM bench serve",
    answer: "nothing: p50, p90, p95 and p99 of every latency are always recorded",
  },
  "warmup-request-count": { from: "AIPerf", answer: "--warmup N (per level)" },
  "num-warmups": { from: "vLLM bench serve", answer: "--warmup N (per level)" },
  streaming: { from: "AIPerf", answer: "nothing: tokenbench always streams (it measures from the stream)" },
  tokenizer: {
    from: "vLLM bench serve, AIPerf",
    answer:
      "nothing: token counts come from the server's own usage and count endpoint, not a local tokenizer",
  },
};
