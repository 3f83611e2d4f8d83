/**
 * The GPU sampler: runs beside the measured client, never in its way. nvidia-smi is one
 * long-lived process (`-lms N`, not a process per sample) that reads the driver's energy counter
 * itself; a DCGM exporter is read by a worker thread. Either way the client's event loop only
 * receives a few lines per second. A sampler that dies says when and why (the levels after it are
 * marked unknown, never zero).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { TokenbenchError } from "../../schema/errors.ts";
import type { DcgmThreadData, FromDcgmThread } from "./dcgm-thread.ts";
import { type GpuSample, NVIDIA_SMI_FIELDS, parseDcgm, parseSmiLine } from "./gpu-telemetry.ts";

export interface GpuSamplerOptions {
  sampleMs: number;
  /** `--gpus 0,1`; null: CUDA_VISIBLE_DEVICES when it lists indices, else every GPU. */
  gpus: number[] | null;
  metricsUrl: string | null;
  /** The sweep's origin: performance.now() and Date.now() at the same instant. */
  originMs: number;
  originWallMs: number;
}

export class GpuError extends TokenbenchError {}

function listGpus(): Promise<{ index: number; uuid: string; name: string }[] | null> {
  return new Promise((resolve) => {
    execFile(
      "nvidia-smi",
      ["--query-gpu=index,uuid,name", "--format=csv,noheader,nounits"],
      { timeout: 15_000 },
      (err, stdout) => {
        if (err) return resolve(null);
        resolve(
          stdout
            .trim()
            .split("\n")
            .map((l) => l.split(",").map((x) => x.trim()))
            .filter((c) => c.length >= 3 && /^\d+$/.test(c[0]!))
            .map((c) => ({ index: Number(c[0]), uuid: c[1]!, name: c[2]! })),
        );
      },
    );
  });
}

/** CUDA_VISIBLE_DEVICES as indices, when it is a list of them. */
function visibleDevices(env: NodeJS.ProcessEnv): number[] | null {
  const v = env.CUDA_VISIBLE_DEVICES?.trim();
  if (!v || !/^\d+(,\d+)*$/.test(v)) return null;
  return v.split(",").map(Number);
}

/** dist/dcgm-thread.js beside the running bundle, or under dist/ when running from source. */
function dcgmThreadFile(): string | null {
  for (const rel of ["./dcgm-thread.js", "../../../dist/dcgm-thread.js"]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  return null;
}

export class GpuSampler {
  readonly samples: GpuSample[] = [];
  died: { t_ms: number; reason: string } | null = null;
  private proc: ChildProcess | null = null;
  private worker: Worker | null = null;
  private stopping = false;

  private constructor(
    readonly source: "nvidia-smi" | "dcgm",
    readonly gpus: { index: number; uuid: string | null; name: string | null }[],
    private readonly o: GpuSamplerOptions,
  ) {}

  private now(): number {
    return performance.now() - this.o.originMs;
  }

  /** The sampler, or why there is none (no tool on this runner). Unknown GPU indices are an error. */
  static async open(o: GpuSamplerOptions): Promise<GpuSampler | { absent: string }> {
    if (o.metricsUrl !== null) {
      const s = new GpuSampler("dcgm", [], o);
      s.startDcgm();
      return s;
    }
    const listed = await listGpus();
    if (listed === null || listed.length === 0)
      return {
        absent:
          "no GPU telemetry: nvidia-smi is not on PATH (or lists no GPU) and --gpu-metrics-url is not set; the energy and cost figures are left out",
      };
    const want = o.gpus ?? visibleDevices(process.env) ?? listed.map((g) => g.index);
    const missing = want.filter((i) => !listed.some((g) => g.index === i));
    if (missing.length > 0)
      throw new GpuError(
        "gpus_unknown",
        `--gpus names GPU ${missing.join(", ")}, which nvidia-smi does not list (it lists ${listed.map((g) => g.index).join(", ")}): name the GPUs the server uses`,
      );
    const s = new GpuSampler(
      "nvidia-smi",
      listed.filter((g) => want.includes(g.index)),
      o,
    );
    s.startSmi(want);
    return s;
  }

  private startSmi(indices: number[]): void {
    const p = spawn(
      "nvidia-smi",
      [
        `--query-gpu=${NVIDIA_SMI_FIELDS.join(",")}`,
        "--format=csv,noheader,nounits",
        `-lms`,
        String(this.o.sampleMs),
        "-i",
        indices.join(","),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.proc = p;
    let buf = "";
    let err = "";
    const toMs = (epoch: number) => epoch - this.o.originWallMs;
    p.stdout!.setEncoding("utf8");
    p.stdout!.on("data", (d: string) => {
      buf += d;
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const s = parseSmiLine(buf.slice(0, nl), toMs, this.now());
        if (s) this.samples.push(s);
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
    });
    p.stderr!.setEncoding("utf8");
    p.stderr!.on("data", (d: string) => {
      err = (err + d).slice(-300);
    });
    const ended = (why: string) => {
      if (this.stopping || this.died) return;
      this.died = { t_ms: this.now(), reason: `nvidia-smi ${why}${err.trim() ? `: ${err.trim()}` : ""}` };
    };
    p.on("exit", (code, signal) => ended(signal ? `was killed (${signal})` : `exited (code ${code})`));
    p.on("error", (e) => ended(`failed: ${e.message}`));
  }

  private startDcgm(): void {
    const file = dcgmThreadFile();
    if (file === null) {
      this.died = { t_ms: this.now(), reason: "dist/dcgm-thread.js is missing: run `npm run build`" };
      return;
    }
    const data: DcgmThreadData = { url: this.o.metricsUrl!, sampleMs: this.o.sampleMs };
    const w = new Worker(file, { workerData: data });
    this.worker = w;
    w.unref();
    w.on("message", (m: FromDcgmThread) => {
      if ("error" in m) {
        if (!this.stopping && !this.died)
          this.died = { t_ms: this.now(), reason: `the DCGM exporter at ${this.o.metricsUrl}: ${m.error}` };
        return;
      }
      const t = m.epochMs - this.o.originWallMs;
      for (const s of parseDcgm(m.text, t)) {
        if (
          !this.gpus.some((g) => g.index === s.index) &&
          (this.o.gpus === null || this.o.gpus.includes(s.index))
        )
          this.gpus.push({ index: s.index, uuid: s.uuid, name: s.name });
        if (this.o.gpus === null || this.o.gpus.includes(s.index)) this.samples.push(s);
      }
    });
    w.on("error", (e) => {
      if (!this.stopping && !this.died)
        this.died = { t_ms: this.now(), reason: `the DCGM reader failed: ${e.message}` };
    });
  }

  /** Until at least `n` reads have come (the idle window), or `maxMs` passed. */
  async waitForSamples(n: number, maxMs: number): Promise<void> {
    const t0 = performance.now();
    const per = Math.max(1, this.gpus.length);
    while (this.samples.length < n * per && performance.now() - t0 < maxMs && this.died === null)
      await new Promise((r) => setTimeout(r, Math.min(50, this.o.sampleMs)));
  }

  /** Until every GPU has a read at or after `tMs` (a window's end needs one on each side), or `maxMs` passed. */
  async waitPast(tMs: number, maxMs: number): Promise<void> {
    const t0 = performance.now();
    const past = () =>
      this.gpus.length > 0 &&
      this.gpus.every((g) => this.samples.some((x) => x.index === g.index && x.t_ms >= tMs));
    while (!past() && performance.now() - t0 < maxMs && this.died === null)
      await new Promise((r) => setTimeout(r, Math.min(50, this.o.sampleMs)));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.proc?.kill("SIGTERM");
    if (this.worker) {
      this.worker.postMessage("stop");
      await this.worker.terminate();
    }
  }
}
