// Preloaded into the tokenbench CLI by tests (`node --import`): a busy loop in the client's own
// process, TB_BUSY_MS of every TB_BUSY_EVERY_MS, as a client starved by its own work would be. The
// harness has no hook for it: what it sees is a real event loop kept from reading its sockets.
// TB_BUSY_FROM=chat starts the loop at a POST to a completions path (undici's own diagnostics
// channel): the first, or the one after TB_BUSY_SKIP of them (a level's first send, past the
// prompt calibration's and the warm-ups), so a client starved almost whole (1 % of a core) is
// starved where the test needs it, not through its start-up as well; TB_BUSY_FOR_MS ends it that
// long after it began, so the rest of the run goes at full speed (starved to its end, a run took
// the 300 s a test allowed beside six busy loops, where each 10 ms gap gave it a sliver of a core).
import { subscribe, unsubscribe } from "node:diagnostics_channel";

const busyMs = Number(process.env.TB_BUSY_MS ?? 40);
const everyMs = Number(process.env.TB_BUSY_EVERY_MS ?? 50);
const skip = Number(process.env.TB_BUSY_SKIP ?? 0);
const forMs = Number(process.env.TB_BUSY_FOR_MS ?? Number.POSITIVE_INFINITY);
const block = () => {
  const t = performance.now();
  while (performance.now() - t < busyMs);
};
const start = () => {
  // the first block at once (an interval's first turn comes a whole period later)
  setTimeout(block, 0).unref();
  const timer = setInterval(block, everyMs).unref();
  if (Number.isFinite(forMs)) setTimeout(() => clearInterval(timer), forMs).unref();
};

if (process.env.TB_BUSY_FROM === "chat") {
  let seen = 0;
  const onCreate = ({ request }) => {
    if (request.method !== "POST" || !/\/completions$/.test(request.path)) return;
    if (++seen <= skip) return;
    unsubscribe("undici:request:create", onCreate);
    start();
  };
  subscribe("undici:request:create", onCreate);
} else start();
