// Preloaded into the tokenbench CLI by tests (`node --import`): a busy loop in the client's own
// process, TB_BUSY_MS of every TB_BUSY_EVERY_MS, as a client starved by its own work would be. The
// harness has no hook for it: what it sees is a real event loop kept from reading its sockets.
const busyMs = Number(process.env.TB_BUSY_MS ?? 40);
const everyMs = Number(process.env.TB_BUSY_EVERY_MS ?? 50);
setInterval(() => {
  const t = performance.now();
  while (performance.now() - t < busyMs);
}, everyMs).unref();
