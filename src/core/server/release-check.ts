/**
 * `--cancel-share`: after a level whose client aborted streams, does the server free what they
 * held? Read from the server's own account, polled until it says nothing is busy or the bound
 * passes: llama.cpp's /slots (`is_processing`), else /metrics' running and waiting requests (each
 * engine's names, metrics-sampler.ts). A server that says neither is not judged.
 */
import { maxOf } from "../../shared/extremes.ts";
import { httpCall } from "./http.ts";
import { scrapeMetrics, toSample } from "./metrics-sampler.ts";
import { endpointTargets, type ResolvedTarget, url } from "./target.ts";

/** How long a server may take to free a level's requests before they count as leaked. */
export const RELEASE_BOUND_MS = 5000;
const POLL_MS = 100;

export interface Release {
  /** How the server was read: its slots, its metrics, or nothing that says. */
  source: "slots" | "metrics" | null;
  /** Seconds after the level's end until nothing was busy, or null when it never was. */
  freed_s: number | null;
  /** Requests (or slots) still busy when the check ended; 0 when freed; null when unknown. */
  busy: number | null;
}

/** What is busy now by one source, or null when that source does not say. */
async function busyBy(target: ResolvedTarget, source: "slots" | "metrics"): Promise<number | null> {
  if (source === "slots") {
    const r = await httpCall(url(target, "/slots"), { headers: { ...target.headers }, timeoutMs: 5_000 });
    if (r.status !== 200 || !Array.isArray(r.json)) return null;
    return (r.json as { is_processing?: unknown }[]).filter((s) => s?.is_processing === true).length;
  }
  const m = await scrapeMetrics(target);
  if (!m.ok) return null;
  const s = toSample(0, m.samples);
  if (s.running === null && s.waiting === null) return null;
  return Math.round((s.running ?? 0) + (s.waiting ?? 0));
}

/**
 * Every server of the target at once (`--base-url A,B`): busy is their sum, freed the slowest's
 * time, and the source the first that says (servers of one engine say the same way).
 */
export async function releaseCheck(target: ResolvedTarget, boundMs = RELEASE_BOUND_MS): Promise<Release> {
  const each = await Promise.all(endpointTargets(target).map((t) => releaseOne(t, boundMs)));
  if (each.length === 1) return each[0]!;
  const known = each.filter((r) => r.source !== null);
  if (known.length === 0) return { source: null, freed_s: null, busy: null };
  const busy = known.reduce((a, r) => a + (r.busy ?? 0), 0);
  return {
    source: known[0]!.source,
    freed_s: busy === 0 ? maxOf(known.map((r) => r.freed_s ?? 0)) : null,
    busy,
  };
}

async function releaseOne(target: ResolvedTarget, boundMs: number): Promise<Release> {
  const t0 = performance.now();
  // the source that answers first is the one polled: a server without /slots is not asked again
  let source: "slots" | "metrics" = "slots";
  let busy = await busyBy(target, source);
  if (busy === null) {
    source = "metrics";
    busy = await busyBy(target, source);
  }
  for (;;) {
    if (busy === null) return { source: null, freed_s: null, busy: null };
    if (busy === 0) return { source, freed_s: (performance.now() - t0) / 1000, busy: 0 };
    if (performance.now() - t0 >= boundMs) return { source, freed_s: null, busy };
    await new Promise((r) => setTimeout(r, POLL_MS));
    busy = await busyBy(target, source);
  }
}
