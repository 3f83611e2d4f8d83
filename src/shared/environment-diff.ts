/**
 * What a comparison's two sides ran on, and what differs: the GPU and its driver, CUDA, power
 * limit and clocks, the server's engine and version (from its own metadata), the model, the
 * server's flags, the harness version, the runner and its CPU. A row judged across such a change
 * says so: part of any change may be the environment's, not the code's. Pure.
 */
import type { ResultDocument } from "../schema/v1.ts";

export interface EnvChange {
  field: string;
  base: string | null;
  head: string | null;
}

/** The facts compared, in the order they are named. */
export const ENV_FIELDS = [
  "gpu",
  "gpu count",
  "driver",
  "CUDA",
  "GPU power limit (W)",
  "GPU max SM clock (MHz)",
  "server",
  "server version",
  "model",
  "server flags",
  "tokenbench",
  "runner",
  "CPU",
] as const;

const str = (v: unknown): string | null =>
  v === null || v === undefined || v === ""
    ? null
    : typeof v === "number"
      ? String(v)
      : typeof v === "string"
        ? v
        : null;

/** A document's environment facts, by ENV_FIELDS name. */
export function environmentFacts(doc: ResultDocument): Record<string, string | null> {
  const g = doc.environment.gpu;
  const ex = (doc.server?.extracted ?? {}) as Record<string, unknown>;
  return {
    gpu: str(g?.name),
    "gpu count": str(g?.count),
    driver: str(g?.driver),
    CUDA: str(g?.cuda_version),
    "GPU power limit (W)": str(g?.power_limit_w),
    "GPU max SM clock (MHz)": str(g?.sm_clock_max_mhz),
    server: str(ex.server_name),
    "server version": str(ex.server_version),
    model: str(doc.target.model),
    "server flags": str(doc.testbed?.engine_flags),
    tokenbench: str(doc.tool.version),
    runner: str(doc.environment.runner_name),
    CPU: str(doc.environment.cpu_model),
  };
}

/** What differs between the base's newest run and the head's: unknown on either side is no difference. */
export function environmentChanges(
  base: readonly { env?: Record<string, string | null> }[],
  head: readonly { env?: Record<string, string | null> }[],
): EnvChange[] {
  const b = base[base.length - 1]?.env;
  const h = head[0]?.env;
  if (!b || !h) return [];
  return ENV_FIELDS.filter((f) => b[f] != null && h[f] != null && b[f] !== h[f]).map((field) => ({
    field,
    base: b[field] ?? null,
    head: h[field] ?? null,
  }));
}

/** "driver 550.54 → 555.42, server version 0.6.1 → 0.7.0". */
export function environmentText(changes: readonly EnvChange[]): string {
  return changes.map((c) => `${c.field} ${c.base} → ${c.head}`).join(", ");
}
