// Preloaded into the tokenbench CLI by tests (`node --import`): a busy loop in the client's own
// process, TB_BUSY_MS of every TB_BUSY_EVERY_MS, as a client starved by its own work would be. The
// harness has no hook for it: what it sees is a real event loop kept from reading its sockets.
// TB_BUSY_FROM=chat starts the loop at the first POST to a completions path (undici's own
// diagnostics channel), so a client starved almost whole (1 % of a core) is starved where the
// test needs it, not through its start-up as well; TB_BUSY_REQUESTS=N ends it once N such
// requests were sent, so its summary and its writing run at full speed too (starved, they took
// the 300 s a test allowed on a busy machine).
import { subscribe, unsubscribe } from "node:diagnostics_channel";

const busyMs = Number(process.env.TB_BUSY_MS ?? 40);
const everyMs = Number(process.env.TB_BUSY_EVERY_MS ?? 50);
const until = Number(process.env.TB_BUSY_REQUESTS ?? Number.POSITIVE_INFINITY);
const start = () =>
  setInterval(() => {
    const t = performance.now();
    while (performance.now() - t < busyMs);
  }, everyMs).unref();

if (process.env.TB_BUSY_FROM === "chat") {
  let timer = null;
  let sent = 0;
  const onCreate = ({ request }) => {
    if (request.method !== "POST" || !/\/completions$/.test(request.path)) return;
    timer ??= start();
    if (++sent < until) return;
    unsubscribe("undici:request:create", onCreate);
    clearInterval(timer);
  };
  subscribe("undici:request:create", onCreate);
} else start();
