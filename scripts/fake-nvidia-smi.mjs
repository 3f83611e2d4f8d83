#!/usr/bin/env node
// A stand-in for nvidia-smi that replays a known trace: each GPU at a constant power
// (FAKE_SMI_GPUS="0:300,1:150", index:watts), its energy counter exactly power × time since start
// on the timestamps it prints, so a window's energy is known to the joule. FAKE_SMI_EXIT_AFTER_MS
// makes the looping process die that long after it started (a sampler lost mid-level);
// FAKE_SMI_DRIVER is the driver version it reports (another environment).
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
      const mj = 1e9 + g.watts * (t - start); // W × ms = mJ
      return `${stamp(t)}, ${g.index}, GPU-fake-${g.index}, ${name}, ${g.watts.toFixed(2)}, 700.00, ${mj}, 87, 40, 70000, 81559, 1980, 61`;
    });
  process.stdout.write(`${lines.join("\n")}\n`);
};
print();
if (every <= 0) process.exit(0);
setInterval(print, every);
const exitAfter = Number(process.env.FAKE_SMI_EXIT_AFTER_MS ?? 0);
if (exitAfter > 0) setTimeout(() => process.exit(3), exitAfter);
process.on("SIGTERM", () => process.exit(0));
