/**
 * GPU telemetry as read: one sample per GPU per read, from `nvidia-smi --query-gpu ... -lms N`
 * lines or a DCGM exporter's Prometheus text. Pure parsing; the sampler (gpu-sampler.ts) reads.
 */
import type { GpuSampleRecord } from "../../schema/v1.ts";

/** One read, as the schema records it (schema/document-parts.ts). */
export type GpuSample = GpuSampleRecord;

/** The nvidia-smi fields, in the order asked (`timestamp` first, for the sample's own time). */
export const NVIDIA_SMI_FIELDS = [
  "timestamp",
  "index",
  "uuid",
  "name",
  "power.draw",
  "power.limit",
  "total_energy_consumption",
  "utilization.gpu",
  "utilization.memory",
  "memory.used",
  "memory.total",
  "clocks.sm",
  "temperature.gpu",
] as const;

/** "[N/A]", "N/A", "[Not Supported]" and empty cells are unknown, never zero. */
const numOf = (s: string | undefined): number | null => {
  const v = Number.parseFloat((s ?? "").trim());
  return Number.isFinite(v) ? v : null;
};

/** nvidia-smi's "2026/12/01 20:17:00.123" (local time) as epoch ms, or null. */
export function smiTimestamp(s: string): number | null {
  const m = /^(\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))?$/.exec(s.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, se, ms] = m;
  return new Date(+y!, +mo! - 1, +d!, +h!, +mi!, +se!, Number((ms ?? "0").padEnd(3, "0"))).getTime();
}

/**
 * One CSV line of `nvidia-smi --query-gpu=<NVIDIA_SMI_FIELDS> --format=csv,noheader,nounits`, or
 * null when it is not one (a warning line, a header). `toMs` maps epoch ms onto the sweep's
 * timeline; `receivedMs` is used when the line has no timestamp.
 */
export function parseSmiLine(
  line: string,
  toMs: (epochMs: number) => number,
  receivedMs: number,
): GpuSample | null {
  const c = line.split(",").map((x) => x.trim());
  if (c.length < NVIDIA_SMI_FIELDS.length) return null;
  const index = Number(c[1]);
  if (!Number.isInteger(index) || index < 0) return null;
  const epoch = smiTimestamp(c[0]!);
  const energyMj = numOf(c[6]);
  return {
    t_ms: epoch !== null ? toMs(epoch) : receivedMs,
    index,
    uuid: c[2] || null,
    name: c[3] || null,
    power_w: numOf(c[4]),
    power_limit_w: numOf(c[5]),
    energy_j: energyMj !== null ? energyMj / 1000 : null,
    util_pct: numOf(c[7]),
    mem_util_pct: numOf(c[8]),
    mem_used_mib: numOf(c[9]),
    mem_total_mib: numOf(c[10]),
    sm_clock_mhz: numOf(c[11]),
    temp_c: numOf(c[12]),
  };
}

/** What a GPU can report: power and energy never below 0, power at most 5 kW a GPU (2026's largest
 * accelerators draw under 2 kW), utilisation 0–100 %, temperature −50 to 200 °C. */
const BOUNDS: { field: keyof GpuSample; lo: number; hi: number; what: string }[] = [
  { field: "power_w", lo: 0, hi: 5000, what: "power" },
  { field: "energy_j", lo: 0, hi: Number.POSITIVE_INFINITY, what: "energy" },
  { field: "util_pct", lo: 0, hi: 100, what: "utilisation" },
  { field: "mem_util_pct", lo: 0, hi: 100, what: "memory utilisation" },
  { field: "temp_c", lo: -50, hi: 200, what: "temperature" },
];

/** A read with each impossible value set to null, and which one it had (the first), if any. */
export function plausibleRead(s: GpuSample): { sample: GpuSample; dropped: string | null } {
  let out = s;
  let dropped: string | null = null;
  for (const b of BOUNDS) {
    const v = s[b.field] as number | null;
    if (v === null || (v >= b.lo && v <= b.hi)) continue;
    dropped ??= `an impossible ${b.what} (${v})`;
    out = { ...out, [b.field]: null };
  }
  return { sample: out, dropped };
}

/**
 * A DCGM exporter's `/metrics` (Prometheus text) at one read: a sample per `gpu` label. Power in
 * W (DCGM_FI_DEV_POWER_USAGE), energy in mJ (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION), utilisation in
 * % (DCGM_FI_DEV_GPU_UTIL), framebuffer used in MiB (DCGM_FI_DEV_FB_USED), clocks and temperature.
 */
export function parseDcgm(text: string, tMs: number): GpuSample[] {
  const byGpu = new Map<number, GpuSample>();
  const line = /^(DCGM_FI_DEV_[A-Z_]+)\{([^}]*)\}\s+([-+0-9.eE]+|NaN)/;
  for (const raw of text.split("\n")) {
    const m = line.exec(raw.trim());
    if (!m) continue;
    const labels = Object.fromEntries(
      [...m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]),
    );
    const index = Number(labels.gpu);
    if (!Number.isInteger(index)) continue;
    const s =
      byGpu.get(index) ??
      ({
        t_ms: tMs,
        index,
        uuid: labels.UUID ?? null,
        name: labels.modelName ?? null,
        power_w: null,
        power_limit_w: null,
        energy_j: null,
        util_pct: null,
        mem_util_pct: null,
        mem_used_mib: null,
        mem_total_mib: null,
        sm_clock_mhz: null,
        temp_c: null,
      } satisfies GpuSample);
    byGpu.set(index, s);
    const v = numOf(m[3]);
    switch (m[1]) {
      case "DCGM_FI_DEV_POWER_USAGE":
        s.power_w = v;
        break;
      case "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION":
        s.energy_j = v !== null ? v / 1000 : null;
        break;
      case "DCGM_FI_DEV_GPU_UTIL":
        s.util_pct = v;
        break;
      case "DCGM_FI_DEV_MEM_COPY_UTIL":
        s.mem_util_pct = v;
        break;
      case "DCGM_FI_DEV_FB_USED":
        s.mem_used_mib = v;
        break;
      case "DCGM_FI_DEV_SM_CLOCK":
        s.sm_clock_mhz = v;
        break;
      case "DCGM_FI_DEV_GPU_TEMP":
        s.temp_c = v;
        break;
    }
  }
  return [...byGpu.values()].sort((a, b) => a.index - b.index);
}
