/** What the run happened on. GPU facts come from nvidia-smi when it exists, else stay unknown. */
import { execFile } from "node:child_process";
import os from "node:os";
import type { ResultDocument } from "../../schema/v1.ts";

type Environment = ResultDocument["environment"];
type Gpu = NonNullable<Environment["gpu"]>;

export function parseNvidiaSmi(csv: string): Gpu | null {
  const rows = csv
    .trim()
    .split("\n")
    .map((l) => l.split(",").map((s) => s.trim()))
    .filter((r) => r.length >= 3 && r[0]);
  if (rows.length === 0) return null;
  const [name, mem, driver] = rows[0]!;
  const memMib = Number.parseFloat(mem ?? "");
  return {
    name: name ?? null,
    count: rows.length,
    memory_mib: Number.isFinite(memMib) ? memMib : null,
    driver: driver ?? null,
  };
}

export function probeGpu(timeoutMs = 5000): Promise<Gpu | null> {
  return new Promise((resolve) => {
    execFile(
      "nvidia-smi",
      ["--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"],
      { timeout: timeoutMs },
      (err, stdout) => resolve(err ? null : parseNvidiaSmi(stdout)),
    );
  });
}

export async function captureEnvironment(): Promise<Environment> {
  const cpus = os.cpus();
  return {
    os: `${os.platform()} ${os.release()}`,
    arch: os.arch(),
    cpu_model: cpus[0]?.model ?? null,
    cpu_count: cpus.length,
    node_version: process.version,
    hostname: os.hostname(),
    gpu: await probeGpu(),
  };
}
