// On a real GPU (not runnable without one): the energy counter against the integral of power.
// Samples every GPU for --seconds (default 60) at 100 ms through the sampler tokenbench uses;
// with --base-url it runs a sweep at --levels against that server meanwhile (a real load), else
// the GPUs idle. Prints per GPU the counter's joules and the integrated joules over the same
// window, and their ratio. Usage: npx tsx bench/gpu-check.ts [--base-url URL --levels 1,8] [--seconds N]
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { levelGpu } from "../src/core/results/energy.ts";
import { GpuSampler } from "../src/core/server/gpu-sampler.ts";
import { f, ROOT } from "./lib.ts";

const arg = (n: string) => {
  const i = process.argv.indexOf(n);
  return i === -1 ? null : process.argv[i + 1]!;
};
const seconds = Number(arg("--seconds") ?? 60);
const originMs = performance.now();
const opened = await GpuSampler.open({
  sampleMs: 100,
  gpus: null,
  metricsUrl: null,
  originMs,
  originWallMs: Date.now(),
});
if ("absent" in opened) {
  console.log(`no GPU: ${opened.absent}`);
  process.exit(1);
}
const baseUrl = arg("--base-url");
const load = baseUrl
  ? spawn(
      process.execPath,
      [
        resolve(ROOT, "bin/tokenbench.js"),
        "sweep",
        "--base-url",
        baseUrl,
        "--levels",
        arg("--levels") ?? "1,8",
        "--duration",
        String(Math.max(5, seconds / 2 - 5)),
        "--quiet",
        "--out",
        "/tmp/tokenbench-gpu-check.json",
      ],
      { stdio: "inherit" },
    )
  : null;
await new Promise((r) => setTimeout(r, seconds * 1000));
load?.kill("SIGINT");
const end = performance.now() - originMs - 500;
const start = 1000;
for (const g of opened.gpus) {
  const mine = opened.samples.filter((s) => s.index === g.index);
  const common = {
    source: "nvidia-smi",
    died: null,
    windowMs: [start, end] as [number, number],
    steady: true,
    idle: new Map(),
    level: 1,
    closedLoop: true,
    outputTokS: 1,
    totalTokS: 1,
    reqS: 1,
    gpuHourUsd: null,
  };
  const counter = levelGpu({ ...common, samples: mine });
  const integrated = levelGpu({ ...common, samples: mine.map((s) => ({ ...s, energy_j: null })) });
  console.log(
    `GPU ${g.index} (${g.name}): ${mine.length} reads; counter ${f(counter.energy_j ?? Number.NaN, 1)} J, integrated power ${f(integrated.energy_j ?? Number.NaN, 1)} J over ${f((end - start) / 1000, 1)} s; ratio ${f((integrated.energy_j ?? Number.NaN) / (counter.energy_j ?? Number.NaN), 4)}`,
  );
}
await opened.stop();
console.log(JSON.stringify({ bench: "gpu-check", gpus: opened.gpus.length, seconds }));
