#!/usr/bin/env node
// A stand-in for nvidia-smi that replays a known trace: each GPU at a constant power
// (FAKE_SMI_GPUS="0:300,1:150", index:watts), its energy counter exactly power × time since start
// on the timestamps it prints, so a window's energy is known to the joule. FAKE_SMI_EXIT_AFTER_MS
// makes the looping process die that long after it started (a sampler lost mid-level);
// FAKE_SMI_DRIVER is the driver version it reports (another environment). And the ways a tool
// lies or hangs: FAKE_SMI_IGNORE_TERM=1 ignores SIGTERM (a wedged driver), FAKE_SMI_COUNTER=frozen
// or jump (its energy counter stops, or leaps by 10^12 J every half second after the first), FAKE_SMI_POWER=W reports
// that power (negative, say), FAKE_SMI_CLOCK_MS=N stamps its reads N ms off, FAKE_SMI_FLOOD=N
// prints N copies of every line, FAKE_SMI_LONG=1 first sends a megabyte without a newline;
// FAKE_SMI_PIDFILE names a file its looping process writes its pid to.
const args = process.argv.slice(2);
const q = (args.find((a) => a.startsWith("--query-gpu=")) ?? "").slice("--query-gpu=".length);
const gpus = (process.env.FAKE_SMI_GPUS ?? "0:300").split(",").map((g) => {
  const [i, w] = g.split(":");
  return { index: Number(i), watts: Number(w) };
});
const name = process.env.FAKE_SMI_NAME ?? "FAKE-GPU (tokenbench test nvidia-smi)";
if (q === "index,uuid,name") {
  for (const g of gpus) console.log(`${g.index}, GPU-fake-${g.index}, ${name}`);
  process.exit(0);
}
if (q === "name,memory.total,driver_version") {
  for (const _ of gpus) console.log(`${name}, 81559, ${process.env.FAKE_SMI_DRIVER ?? "999.99"}`);
  process.exit(0);
}
const li = args.indexOf("-lms");
const every = li >= 0 ? Number(args[li + 1]) : 0;
const ii = args.indexOf("-i");
const only = ii >= 0 ? args[ii + 1].split(",").map(Number) : null;
const start = Date.now();
const pad = (n, w = 2) => String(n).padStart(w, "0");
const stamp = (t) => {
  const d = new Date(t);
  return `${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
};
const print = () => {
  const t = Date.now();
  const lines = gpus
    .filter((g) => only === null || only.includes(g.index))
    .map((g) => {
      const counter = process.env.FAKE_SMI_COUNTER;
      let mj = 1e9 + g.watts * (t - start); // W × ms = mJ
      if (counter === "frozen") mj = 1e9;
      // leaps by 10^12 J every half second from the first second on, so that every level's window
      // holds a leap however long the set-up before the first level took
      if (counter === "jump" && t - start > 1000) mj += 1e15 * Math.floor((t - start) / 500);
      const watts = process.env.FAKE_SMI_POWER !== undefined ? Number(process.env.FAKE_SMI_POWER) : g.watts;
      return `${stamp(t + Number(process.env.FAKE_SMI_CLOCK_MS ?? 0))}, ${g.index}, GPU-fake-${g.index}, ${name}, ${watts.toFixed(2)}, 700.00, ${mj}, 87, 40, 70000, 81559, 1980, 61`;
    });
  const copies = Number(process.env.FAKE_SMI_FLOOD ?? 1);
  const text = `${lines.join("\n")}\n`;
  process.stdout.write(copies > 1 ? text.repeat(copies) : text);
};
if (process.env.FAKE_SMI_LONG === "1") process.stdout.write("x".repeat(1_000_000));
if (process.env.FAKE_SMI_PIDFILE && every > 0)
  (await import("node:fs")).writeFileSync(process.env.FAKE_SMI_PIDFILE, String(process.pid));
print();
if (every <= 0) process.exit(0);
setInterval(print, every);
const exitAfter = Number(process.env.FAKE_SMI_EXIT_AFTER_MS ?? 0);
if (exitAfter > 0) setTimeout(() => process.exit(3), exitAfter);
process.on("SIGTERM", () => {
  if (process.env.FAKE_SMI_IGNORE_TERM !== "1") process.exit(0);
});
