import { createRequire as __tbCreateRequire } from 'node:module'; const require = __tbCreateRequire(import.meta.url);

// src/core/server/dcgm-thread.ts
import { parentPort, workerData } from "node:worker_threads";

// src/core/server/target.ts
function urlBasicAuth(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.username === "" && u.password === "") return null;
  let pair = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  return `Basic ${Buffer.from(pair).toString("base64")}`;
}

// src/core/server/dcgm-thread.ts
var { url: given, sampleMs } = workerData, auth = urlBasicAuth(given), url = auth === null ? given : given.replace(/\/\/[^/@]*@/, "//"), stopped = !1;
parentPort.on("message", () => {
  stopped = !0;
});
var post = (m) => parentPort.postMessage(m);
for (; !stopped; ) {
  let t0 = Date.now();
  try {
    let res = await fetch(url, {
      signal: AbortSignal.timeout(Math.max(1e3, 5 * sampleMs)),
      ...auth ? { headers: { authorization: auth } } : {}
    }), text = await res.text();
    post(res.ok ? { epochMs: Date.now(), text } : { error: `HTTP ${res.status}` });
  } catch (e) {
    post({ error: String(e?.message ?? e) });
  }
  await new Promise((r) => setTimeout(r, Math.max(0, sampleMs - (Date.now() - t0))));
}
