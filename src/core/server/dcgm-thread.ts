/**
 * The DCGM exporter's reader (`--gpu-metrics-url`), on a thread of its own so that a slow or
 * hanging exporter never delays the measured client's event loop: it reads the exporter every
 * `sampleMs` and posts each read's text and wall time (or the error) to gpu-sampler.ts, until told
 * to stop. Bundled to dist/dcgm-thread.js beside the CLI and the Action.
 */
import { parentPort, workerData } from "node:worker_threads";
import { urlBasicAuth } from "./target.ts";

export interface DcgmThreadData {
  url: string;
  sampleMs: number;
}
export type FromDcgmThread = { epochMs: number; text: string } | { error: string };

const { url: given, sampleMs } = workerData as DcgmThreadData;
// Credentials in the URL (user:pw@) go as a Basic header: fetch refuses them in a URL.
const auth = urlBasicAuth(given);
const url = auth === null ? given : given.replace(/\/\/[^/@]*@/, "//");
let stopped = false;
parentPort!.on("message", () => {
  stopped = true;
});
const post = (m: FromDcgmThread) => parentPort!.postMessage(m);

while (!stopped) {
  const t0 = Date.now();
  try {
    // A read slower than five periods (at least 1 s) is a stalled exporter, not a slow one.
    const res = await fetch(url, {
      signal: AbortSignal.timeout(Math.max(1000, 5 * sampleMs)),
      ...(auth ? { headers: { authorization: auth } } : {}),
    });
    const text = await res.text();
    post(res.ok ? { epochMs: Date.now(), text } : { error: `HTTP ${res.status}` });
  } catch (e) {
    post({ error: String((e as Error)?.message ?? e) });
  }
  await new Promise((r) => setTimeout(r, Math.max(0, sampleMs - (Date.now() - t0))));
}
