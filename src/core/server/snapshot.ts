/**
 * What the server says about itself: the metadata snapshot of its endpoints and the facts read
 * from them. Every endpoint is optional; a missing one is recorded as absent, never fatal. Raw
 * responses are kept.
 */
import type { ServerSnapshot } from "../../schema/v1.ts";
import { httpCall } from "./http.ts";
import { type Target, url } from "./target.ts";

export const SNAPSHOT_ENDPOINTS = [
  "/health",
  "/v1/models",
  "/v1/cache/status",
  "/v1/stats",
  "/props",
  "/get_server_info",
  "/version",
  "/metrics",
] as const;

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null;

/** Pull the facts out of the raw endpoint bodies. Pure. */
export function extractServerFacts(
  bodies: Record<string, unknown>,
  metricsText: string | null,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const models = obj(bodies["/v1/models"]);
  const m0 = Array.isArray(models?.data) ? obj(models.data[0]) : null;
  if (m0) {
    out.model_id = str(m0.id);
    if (num(m0.max_model_len) !== null) out.context_length = num(m0.max_model_len);
    if (str(m0.owned_by)) out.owned_by = m0.owned_by;
  }
  const stats = obj(bodies["/v1/stats"]);
  if (stats) {
    const server = obj(stats.server);
    if (server) {
      out.server_name = str(server.name);
      out.server_version = str(server.version);
    }
    const model = obj(stats.model);
    if (model && num(model.context_length) !== null) out.context_length = num(model.context_length);
    if (Array.isArray(stats.gpus)) out.gpus = stats.gpus;
    const limits = obj(stats.limits);
    if (limits) {
      if (num(limits.max_running_requests) !== null)
        out.max_running_requests = num(limits.max_running_requests);
      if (num(limits.cuda_graph_max_bs) !== null) out.cuda_graph_max_bs = num(limits.cuda_graph_max_bs);
      if (num(limits.max_total_num_tokens) !== null)
        out.cache_budget_tokens = num(limits.max_total_num_tokens);
    }
    for (const k of ["moe", "mamba", "moe_residency", "kv_cache"])
      if (stats[k] !== undefined) out[k] = stats[k];
  }
  const cache = obj(bodies["/v1/cache/status"]);
  if (cache) {
    out.cache_status = cache;
    const kv = obj(cache.kv_cache);
    if (kv && num(kv.budget_tokens) !== null) out.cache_budget_tokens = num(kv.budget_tokens);
    if (typeof cache.reports_cached_tokens === "boolean")
      out.reports_cached_tokens = cache.reports_cached_tokens;
  }
  const sg = obj(bodies["/get_server_info"]);
  if (sg) {
    out.server_name = out.server_name ?? "sglang";
    out.server_version = str(sg.version) ?? out.server_version ?? null;
    if (num(sg.context_length) !== null) out.context_length = num(sg.context_length);
    if (num(sg.max_running_requests) !== null) out.max_running_requests = num(sg.max_running_requests);
    if (num(sg.cuda_graph_max_bs) !== null) out.cuda_graph_max_bs = num(sg.cuda_graph_max_bs);
    if (num(sg.max_total_num_tokens) !== null) out.cache_budget_tokens = num(sg.max_total_num_tokens);
    if (num(sg.page_size) !== null) out.kv_page_size = num(sg.page_size);
    if (str(sg.model_path)) out.model_id = out.model_id ?? sg.model_path;
  }
  const props = obj(bodies["/props"]);
  if (props) {
    out.server_name = out.server_name ?? "llama.cpp";
    if (str(props.build_info)) out.server_version = props.build_info;
    const dgs = obj(props.default_generation_settings);
    if (dgs && num(dgs.n_ctx) !== null) out.context_length = num(dgs.n_ctx);
    if (num(props.total_slots) !== null) out.max_running_requests = num(props.total_slots);
    if (str(props.model_path)) out.model_path = props.model_path;
  }
  const ver = obj(bodies["/version"]);
  if (ver && str(ver.version)) {
    out.server_version = out.server_version ?? ver.version;
    out.server_name = out.server_name ?? "vllm";
  }
  if (metricsText !== null) {
    if (out.server_name === undefined) {
      if (metricsText.includes("vllm:")) out.server_name = "vllm";
      else if (metricsText.includes("sglang:")) out.server_name = "sglang";
      else if (metricsText.includes("llamacpp:")) out.server_name = "llama.cpp";
      else if (metricsText.includes("freetoken:")) out.server_name = "freetoken";
      else if (metricsText.includes("tgi_")) out.server_name = "tgi";
    }
    const block = /vllm:cache_config_info\{([^}]*)\}/.exec(metricsText);
    if (block) {
      const bs = /block_size="(\d+)"/.exec(block[1]!);
      if (bs) out.kv_block_size = Number(bs[1]);
      const nb = /num_gpu_blocks="(\d+)"/.exec(block[1]!);
      if (nb) out.kv_num_gpu_blocks = Number(nb[1]);
    }
  }
  for (const [k, v] of Object.entries(out)) if (v === null || v === undefined) delete out[k];
  return out;
}

/** What the snapshot keeps of one JSON answer: whole up to this size, else a note and its start. */
export const SNAPSHOT_BODY_BYTES = 64 * 1024;

function boundedBody(json: unknown, text: string): unknown {
  if (json === null) return text.slice(0, 4096);
  if (text.length <= SNAPSHOT_BODY_BYTES) return json;
  return {
    tokenbench_truncated: `the answer was ${text.length} bytes; the snapshot keeps its first 4096 characters so the document stays within the results service's limits`,
    head: text.slice(0, 4096),
  };
}

export async function snapshotServer(
  target: Target,
  limits: Record<string, string | number>,
): Promise<ServerSnapshot> {
  const headers = { ...target.headers };
  const endpoints: ServerSnapshot["endpoints"] = {};
  const bodies: Record<string, unknown> = {};
  let metricsText: string | null = null;
  await Promise.all(
    SNAPSHOT_ENDPOINTS.map(async (p) => {
      const r = await httpCall(url(target, p), { headers, timeoutMs: 10_000 });
      const present = r.status !== null && r.status < 400;
      let body: unknown;
      if (present) {
        if (p === "/metrics") {
          metricsText = r.text;
          body = (r.text ?? "").slice(0, 65_536);
        } else body = boundedBody(r.json, r.text ?? "");
        bodies[p] = r.json;
      }
      endpoints[p] = { present, status: r.status, ...(body !== undefined ? { body } : {}) };
    }),
  );
  const extracted = extractServerFacts(bodies, metricsText);
  const merged: Record<string, string | number> = {};
  for (const k of ["max_running_requests", "cuda_graph_max_bs"]) {
    const v = extracted[k];
    if (typeof v === "number") merged[k] = v;
  }
  Object.assign(merged, limits); // what the user states wins over what the server exposes
  return { endpoints, extracted, limits: merged };
}

export function limitNumber(limits: Record<string, string | number> | undefined, key: string): number | null {
  const v = limits?.[key];
  return typeof v === "number" ? v : null;
}
