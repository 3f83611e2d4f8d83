/**
 * `--cache-reset level|sweep`: the server's own prefix cache emptied before each level's warmup
 * (or once before the first level), so no level is served from what an earlier one left. Each
 * engine has its own way, found from what the preflight's snapshot saw it serve: llama.cpp erases
 * each slot (`POST /slots/{id}?action=erase`, which needs `--slot-save-path`; a build with a
 * host-memory prompt cache, `--cache-ram`, on by default, restores an erased prompt from it, so
 * a cold start needs `--cache-ram 0`: the level's cache_unasked reason says when it was not), SGLang flushes
 * (`POST /flush_cache`), vLLM resets (`POST /reset_prefix_cache`, served in its dev mode,
 * `VLLM_SERVER_DEV_MODE=1`). A server with none is refused before any load.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { ServerSnapshot } from "../../schema/v1.ts";
import { httpCall } from "./http.ts";
import { endpointTargets, type ResolvedTarget, rootUrl, url } from "./target.ts";

export type CacheResetMethod = "llamacpp_erase_slots" | "sglang_flush_cache" | "vllm_reset_prefix_cache";

/** What each method sends, for the document and the messages. */
export const CACHE_RESET_TEXT: Record<CacheResetMethod, string> = {
  llamacpp_erase_slots: "llama.cpp: POST /slots/{id}?action=erase for every slot",
  sglang_flush_cache: "SGLang: POST /flush_cache",
  vllm_reset_prefix_cache: "vLLM: POST /reset_prefix_cache",
};

/** What the server must be started with for its reset to answer. */
const NEEDS: Record<CacheResetMethod, string> = {
  llamacpp_erase_slots:
    "start llama-server with --slot-save-path DIR (it enables the slot actions) and --cache-ram 0 (else it restores erased prompts from its host-memory cache)",
  sglang_flush_cache: "SGLang serves /flush_cache unless it is behind a proxy that hides it",
  vllm_reset_prefix_cache: "start vLLM with VLLM_SERVER_DEV_MODE=1 (it serves /reset_prefix_cache only then)",
};

/** The reset the server's own endpoints say it has, or null (the engine is not one that has one). */
export function cacheResetMethod(server: ServerSnapshot): CacheResetMethod | null {
  const has = (p: string) => server.endpoints[p]?.present === true;
  if (has("/props")) return "llamacpp_erase_slots";
  if (has("/get_server_info")) return "sglang_flush_cache";
  if (has("/version")) return "vllm_reset_prefix_cache";
  return null;
}

export function refuseWithoutReset(target: ResolvedTarget): never {
  throw new TokenbenchError(
    "cache_reset_unsupported",
    `${rootUrl(target)} has no cache reset tokenbench knows (it serves none of llama.cpp's /props, SGLang's /get_server_info, vLLM's /version): run without --cache-reset, or restart the server between runs to start from a cold cache`,
  );
}

/** The slots llama.cpp serves: its /slots list (one entry per slot). */
async function slotIds(target: ResolvedTarget): Promise<number[]> {
  const r = await httpCall(url(target, "/slots"), { headers: { ...target.headers } });
  const list = Array.isArray(r.json) ? (r.json as { id?: unknown }[]) : [];
  return list.map((s) => s.id).filter((id): id is number => Number.isInteger(id));
}

/** Empty the server's prefix cache; throws cache_reset_failed with the server's answer and the remedy. */
/** The reset on every server of the target (`--base-url A,B`: each of them, one after the other). */
export async function resetCache(target: ResolvedTarget, method: CacheResetMethod): Promise<void> {
  for (const t of endpointTargets(target)) await resetOne(t, method);
}

async function resetOne(target: ResolvedTarget, method: CacheResetMethod): Promise<void> {
  const calls =
    method === "llamacpp_erase_slots"
      ? (await slotIds(target)).map((id) => `/slots/${id}?action=erase`)
      : [method === "sglang_flush_cache" ? "/flush_cache" : "/reset_prefix_cache"];
  if (calls.length === 0)
    throw new TokenbenchError(
      "cache_reset_failed",
      `${rootUrl(target)} listed no slots at GET /slots, so none could be erased: ${NEEDS[method]}, or run without --cache-reset`,
    );
  for (const path of calls) {
    const r = await httpCall(url(target, path), {
      method: "POST",
      headers: { ...target.headers },
      timeoutMs: 60_000,
    });
    if (r.status === null || r.status >= 300)
      throw new TokenbenchError(
        "cache_reset_failed",
        `the cache reset (${CACHE_RESET_TEXT[method]}) failed at ${rootUrl(target)}: POST ${path}: ${r.status === null ? r.error : `HTTP ${r.status} ${(r.text ?? "").slice(0, 160)}`}: ${NEEDS[method]}, or run without --cache-reset`,
      );
  }
}
