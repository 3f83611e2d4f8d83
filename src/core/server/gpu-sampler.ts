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
import {
  type GpuSample,
  NVIDIA_SMI_FIELDS,
  parseDcgm,
  parseSmiLine,
  plausibleRead,
} from "./gpu-telemetry.ts";
import { publicUrl } from "./target.ts";

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

/** A line longer than this is not nvidia-smi's (one GPU's CSV line is under 300 bytes). */
const MAX_LINE = 4096;
/** Reads further from this machine's clock than this are placed when they arrived. */
const CLOCK_SLACK_MS = 5000;
/** How long a tool may take to end after SIGTERM before it is killed. */
const STOP_GRACE_MS = 2000;
/** A DCGM exporter that failed this many reads in a row, over this long, is gone; fewer is a gap. */
const DCGM_FAILURES = 3;
const DCGM_FAILURE_MS = 2000;

export class GpuSampler {
  readonly samples: GpuSample[] = [];
  died: { t_ms: number; reason: string } | null = null;
  /** What was set aside while reading (a lying clock, dropped reads), said once each at the end. */
  readonly notes = new Set<string>();
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
    // The tool may never hold tokenbench open (its pipes would keep the event loop alive).
    p.unref();
    let buf = "";
    let err = "";
    const toMs = (epoch: number) => epoch - this.o.originWallMs;
    // Lines a second it may send: what -lms asks for, four times over; a flood past that is read
    // no further (the sampler must never take the measuring client's time).
    const perSecond = Math.ceil((4 * 1000 * Math.max(1, indices.length)) / Math.max(1, this.o.sampleMs)) + 20;
    let second = Math.floor(this.now() / 1000);
    let lines = 0;
    p.stdout!.setEncoding("utf8");
    p.stdout!.on("data", (d: string) => {
      buf += d;
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const now = this.now();
        if (Math.floor(now / 1000) !== second) {
          second = Math.floor(now / 1000);
          lines = 0;
        }
        if (++lines > perSecond) {
          this.gone(
            `nvidia-smi flooded its output (more than ${perSecond} lines in a second for ${indices.length} GPU${indices.length === 1 ? "" : "s"} every ${this.o.sampleMs} ms): stopped reading it`,
          );
          return;
        }
        const s = parseSmiLine(buf.slice(0, nl), toMs, now);
        if (s) this.keep(s, now);
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
      if (buf.length > MAX_LINE) {
        this.notes.add(`nvidia-smi sent a line of more than ${MAX_LINE} bytes: it was dropped`);
        buf = "";
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
    // A failed read is a gap; failures in a row for long enough are an exporter gone.
    let failures = 0;
    let firstFailure = 0;
    w.on("message", (m: FromDcgmThread) => {
      if ("error" in m) {
        if (this.stopping || this.died) return;
        if (failures++ === 0) firstFailure = this.now();
        const where = `the DCGM exporter at ${publicUrl(this.o.metricsUrl!)}`;
        if (failures >= DCGM_FAILURES && this.now() - firstFailure >= DCGM_FAILURE_MS)
          this.died = { t_ms: firstFailure, reason: `${where}: ${m.error} (${failures} reads in a row)` };
        else this.notes.add(`${where} failed a read now and then (${m.error}): those reads are gaps`);
        return;
      }
      failures = 0;
      const t = m.epochMs - this.o.originWallMs;
      for (const s of parseDcgm(m.text, t)) {
        if (
          !this.gpus.some((g) => g.index === s.index) &&
          (this.o.gpus === null || this.o.gpus.includes(s.index))
        )
          this.gpus.push({ index: s.index, uuid: s.uuid, name: s.name });
        if (this.o.gpus === null || this.o.gpus.includes(s.index)) this.keep(s, this.now());
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

  /** A read kept: its time checked against this machine's clock, impossible values dropped. */
  private keep(s: GpuSample, receivedMs: number): void {
    if (Math.abs(s.t_ms - receivedMs) > CLOCK_SLACK_MS) {
      this.notes.add(
        `${this.source}'s timestamps were ${((s.t_ms - receivedMs) / 1000).toFixed(0)} s off this machine's clock: its reads were placed when they arrived`,
      );
      s = { ...s, t_ms: receivedMs };
    }
    const sane = plausibleRead(s);
    if (sane.dropped !== null)
      this.notes.add(`${this.source} reported ${sane.dropped}: those reads were left out`);
    this.samples.push(sane.sample);
  }

  /** The tool is given up on, with why (its reads so far stay). */
  private gone(reason: string): void {
    if (!this.died) this.died = { t_ms: this.now(), reason };
    this.proc?.stdout?.removeAllListeners("data");
    this.proc?.stdout?.destroy();
    this.proc?.kill("SIGKILL");
  }

  /**
   * Stops the tool: SIGTERM, then SIGKILL after a grace period (a wedged driver's nvidia-smi can
   * ignore SIGTERM), its pipes closed either way; resolves when it has ended or been killed.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    const p = this.proc;
    if (p && p.exitCode === null && p.signalCode === null) {
      // While it is being stopped the tool holds the process (it was unref'd so that it never
      // could otherwise): this waits for its end, or kills it after the grace period.
      p.ref();
      const ended = new Promise<void>((res) => p.once("exit", () => res()));
      p.kill("SIGTERM");
      const timer = setTimeout(() => p.kill("SIGKILL"), STOP_GRACE_MS);
      let last: NodeJS.Timeout | undefined;
      await Promise.race([ended, new Promise((r) => (last = setTimeout(r, STOP_GRACE_MS + 1000)))]);
      clearTimeout(timer);
      clearTimeout(last);
      p.unref();
    }
    p?.stdout?.destroy();
    p?.stderr?.destroy();
    if (this.worker) {
      this.worker.postMessage("stop");
      await this.worker.terminate();
    }
  }
}
