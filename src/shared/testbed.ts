/**
 * Testbeds: what makes results comparable. Hardware, server, model and the harness settings that
 * change the workload, canonicalized and hashed (SHA-256, Web Crypto: runs in Node and Workers).
 */
import type { ResultDocument } from "../schema/v1.ts";
import { workloadSpec } from "./workload.ts";

export interface TestbedSpec {
  gpu: string | null;
  gpu_count: number | null;
  engine: string | null;
  engine_version: string | null;
  engine_flags: string | null;
  model: string;
  api: string;
  workload: Record<string, unknown>;
}

export function testbedSpec(doc: ResultDocument): TestbedSpec {
  const tb = doc.testbed ?? null;
  const ex = (doc.server?.extracted ?? {}) as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
  // The workload settings, as they have always been hashed here: the workload's own fingerprint
  // less API and model (fields of their own below) and levels (benchmarks of their own).
  const { api: _api, model: _model, levels: _levels, targets: _targets, ...workload } = workloadSpec(doc);
  return {
    gpu: tb?.gpu ?? doc.environment.gpu?.name ?? null,
    gpu_count: tb?.gpu_count ?? doc.environment.gpu?.count ?? null,
    engine: tb?.engine ?? s(ex.server_name),
    engine_version: tb?.engine_version ?? s(ex.server_version),
    engine_flags: tb?.engine_flags ?? null,
    model: tb?.model ?? doc.target.model,
    api: doc.target.api,
    workload,
  };
}

/** The document's testbed: what the user declares (name, server flags), the rest as measured. */
export function describeTestbed(
  doc: ResultDocument,
  declared: { name: string | null; engine_flags: string | null },
): NonNullable<ResultDocument["testbed"]> {
  const spec = testbedSpec({ ...doc, testbed: null });
  return {
    name: declared.name,
    gpu: spec.gpu,
    gpu_count: spec.gpu_count,
    engine: spec.engine,
    engine_version: spec.engine_version,
    engine_flags: declared.engine_flags,
    model: spec.model,
  };
}

/** JSON with object keys sorted at every depth: equal specs give equal strings. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(",")}}`;
}

export async function sha256Hex(text: string): Promise<string> {
  const buf = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function testbedFingerprint(spec: TestbedSpec): Promise<string> {
  return (await sha256Hex(canonicalJson(spec))).slice(0, 16);
}

export function testbedDisplayName(doc: ResultDocument, spec: TestbedSpec): string {
  if (doc.testbed?.name) return doc.testbed.name;
  const hw = spec.gpu
    ? `${spec.gpu_count && spec.gpu_count > 1 ? `${spec.gpu_count}x ` : ""}${spec.gpu}`
    : "no-gpu";
  return `${hw} / ${spec.engine ?? "server"}${spec.engine_version ? ` ${spec.engine_version}` : ""} / ${spec.model}`;
}

/**
 * Where a run's energy figures came from, in words: "nvidia-smi, 2 GPUs (NVIDIA H200) every 200 ms",
 * GPU names as the tool gave them (a demo's fake says it is one). Callers escape for their medium.
 */
export function gpuTelemetryText(t: NonNullable<ResultDocument["gpu_telemetry"]>): string {
  const names = [...new Set(t.gpus.map((x) => x.name ?? "?"))].join(", ");
  return `${t.source}, ${t.gpus.length} GPU${t.gpus.length === 1 ? "" : "s"} (${names}) every ${t.sample_ms} ms${t.died ? `; it stopped: ${t.died.reason}` : ""}`;
}
