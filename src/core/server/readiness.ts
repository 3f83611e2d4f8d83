/**
 * Waiting for the server to be ready, with the probe each kind of server answers, and the words
 * for a connection error. Errors that waiting will not cure end the wait at once.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import { httpCall, oneTokenRequest } from "./http.ts";
import { completionsPath, rootUrl, type Target, url } from "./target.ts";

export class ReadinessError extends TokenbenchError {
  constructor(message: string) {
    super("not_ready", message);
  }
}

export interface Readiness {
  ready: boolean;
  waited_s: number;
  probes: string[];
  /** Seconds until the server first answered HTTP at all (its port open, loading or not), or null. */
  answered_s?: number | null;
}

/** Errors that waiting will not cure: a name that does not resolve, a TLS failure. */
const HOPELESS = /ENOTFOUND|EAI_AGAIN|CERT|SSL|TLS|ERR_INVALID_URL/;

/** What a connection error means, in words, for messages. */
export function connectionCause(error: string): string {
  if (/ECONNREFUSED/.test(error)) return "connection refused: is the server running, and is the port right?";
  if (/ENOTFOUND|EAI_AGAIN/.test(error))
    return "the host name does not resolve: check the host in the base URL";
  if (/CERT|SSL|TLS/.test(error)) return "TLS handshake failed: check https vs http and the certificate";
  if (/TIMEOUT/i.test(error)) return "no answer in time: is the host reachable from here?";
  return error;
}

/**
 * Poll until ready. FreeToken: /health JSON `status: ok` + `maintenance: serving` (else loading);
 * vLLM/SGLang: /health 200; llama.cpp: /health 503 while loading; no /health: /v1/models 200;
 * neither: a 1-token completion that answers 200.
 */
export async function waitReady(
  target: Target,
  opts: {
    timeoutS: number;
    intervalMs?: number;
    onWait?: (message: string) => void;
    /** Why waiting is pointless now (the server process exited), or null: checked before every probe. */
    serverExited?: () => string | null;
  },
): Promise<Readiness> {
  const headers = { ...target.headers };
  const t0 = performance.now();
  let lastWaitNotice = t0;
  const probes: string[] = [];
  let answered: number | null = null;
  const note = (s: string) => {
    if (probes[probes.length - 1] !== s) probes.push(s);
  };
  const interval = opts.intervalMs ?? 250;
  for (;;) {
    const exited = opts.serverExited?.() ?? null;
    if (exited !== null) throw new TokenbenchError("server_exited", exited);
    const h = await httpCall(url(target, "/health"), { headers, timeoutMs: 5000 });
    if (h.status !== null) answered ??= (performance.now() - t0) / 1000;
    if (h.status === 200) {
      const j = h.json as { status?: unknown; maintenance?: unknown; progress?: unknown } | null;
      if (j && typeof j === "object" && (j.status !== undefined || j.maintenance !== undefined)) {
        const okStatus = j.status === "ok" || j.status === "healthy" || j.status === "ready";
        const serving = j.maintenance === undefined || j.maintenance === "serving";
        if (okStatus && serving) {
          note(`GET /health -> 200 ${JSON.stringify(j).slice(0, 80)}`);
          return { ready: true, waited_s: (performance.now() - t0) / 1000, probes, answered_s: answered };
        }
        note(
          `GET /health -> 200 loading${typeof j.progress === "number" ? ` (progress ${j.progress.toFixed(2)})` : ""}`,
        );
      } else {
        note("GET /health -> 200");
        return { ready: true, waited_s: (performance.now() - t0) / 1000, probes, answered_s: answered };
      }
    } else if (h.status === 404 || h.status === 405) {
      note(`GET /health -> ${h.status}`);
      const m = await httpCall(url(target, "/v1/models"), { headers, timeoutMs: 5000 });
      if (m.status === 200) {
        note("GET /v1/models -> 200");
        return { ready: true, waited_s: (performance.now() - t0) / 1000, probes, answered_s: answered };
      }
      note(`GET /v1/models -> ${m.status ?? m.error}`);
      if (target.model !== null) {
        const c = await oneTokenRequest(target, target.model);
        note(`POST ${completionsPath(target.api)} (max_tokens=1) -> ${c.status ?? c.error}`);
        if (c.status === 200)
          return { ready: true, waited_s: (performance.now() - t0) / 1000, probes, answered_s: answered };
      }
    } else {
      note(`GET /health -> ${h.status ?? h.error}`);
      if (h.error !== null && HOPELESS.test(h.error))
        throw new ReadinessError(`cannot reach ${rootUrl(target)}: ${connectionCause(h.error)} (${h.error})`);
    }
    const waited = (performance.now() - t0) / 1000;
    if (waited >= opts.timeoutS) {
      const cause = h.error !== null ? `${connectionCause(h.error)}; ` : "";
      throw new ReadinessError(
        `server at ${rootUrl(target)} not ready after ${opts.timeoutS} s: ${cause}tried: ${probes.join("; ")} (--ready-timeout-s waits longer)`,
      );
    }
    if (performance.now() - lastWaitNotice >= 10_000) {
      lastWaitNotice = performance.now();
      opts.onWait?.(
        `waiting for ${rootUrl(target)} to be ready (${waited.toFixed(0)} s of ${opts.timeoutS} s): ${h.error !== null ? connectionCause(h.error) : probes.at(-1)}`,
      );
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
