/**
 * The sweep's settings as named flags, shared by the CLI (`--levels`) and the Action (input
 * `levels`): one mapping from names to SweepConfig, so the two cannot drift. Callers turn a
 * FlagError into their own error (usage error, exit 2; failed step naming the input).
 */
import type { SweepConfig } from "../schema/v1.ts";

export class FlagError extends Error {
  constructor(
    readonly flag: string,
    readonly problem: string,
  ) {
    super(`${flag}: ${problem}`);
  }
}

/** Returns the raw value of a flag, or undefined/empty when absent. */
export type FlagSource = (name: string) => string | undefined;

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

export function flagNumber(
  get: FlagSource,
  name: string,
  def: number | null,
  ok: (n: number) => boolean,
  what: string,
): number | null {
  const v = get(name);
  if (!present(v)) return def;
  const n = Number(v);
  if (!Number.isFinite(n) || !ok(n)) throw new FlagError(name, `must be ${what}, got "${v}"`);
  return n;
}

export function flagBool(get: FlagSource, name: string, def: boolean): boolean {
  const v = get(name);
  if (!present(v)) return def;
  if (/^(true|yes|1|on)$/i.test(v.trim())) return true;
  if (/^(false|no|0|off)$/i.test(v.trim())) return false;
  throw new FlagError(name, `must be true or false, got "${v}"`);
}

export function flagOneOf<T extends string>(get: FlagSource, name: string, allowed: readonly T[], def: T): T {
  const v = get(name);
  if (!present(v)) return def;
  if (!allowed.includes(v.trim() as T))
    throw new FlagError(name, `must be one of ${allowed.join(", ")}, got "${v}"`);
  return v.trim() as T;
}

export function flagList(
  get: FlagSource,
  name: string,
  def: number[],
  ok: (n: number) => boolean,
  what: string,
): number[] {
  const v = get(name);
  if (!present(v)) return def;
  const parts = v.split(",").map((s) => s.trim());
  const out = parts.map(Number);
  if (parts.some((p) => p === "") || out.some((n) => !Number.isFinite(n) || !ok(n))) {
    throw new FlagError(name, `must be a comma-separated list of ${what}, got "${v}"`);
  }
  if (new Set(out).size !== out.length) throw new FlagError(name, `has duplicate values: "${v}"`);
  return out;
}

export function flagJsonObject(get: FlagSource, name: string): Record<string, unknown> {
  const v = get(name);
  if (!present(v)) return {};
  let p: unknown;
  try {
    p = JSON.parse(v);
  } catch {
    throw new FlagError(name, `must be a JSON object, got invalid JSON: ${v.slice(0, 80)}`);
  }
  if (p === null || typeof p !== "object" || Array.isArray(p))
    throw new FlagError(name, "must be a JSON object");
  return p as Record<string, unknown>;
}

export const positiveInt = (n: number) => Number.isInteger(n) && n > 0;
export const nonNegInt = (n: number) => Number.isInteger(n) && n >= 0;
export const positive = (n: number) => n > 0;

export interface SweepFlagDefaults {
  closedLevels: number[];
  openLevels: number[];
  warmup: number;
}

export function sweepConfigFromFlags(
  get: FlagSource,
  defaults: SweepFlagDefaults,
  headerNames: string[] = [],
): SweepConfig {
  const mode = flagOneOf(get, "mode", ["closed", "open"] as const, "closed");
  const duration = flagNumber(get, "duration", null, positive, "a positive number of seconds");
  const metrics = flagNumber(get, "metrics-interval-ms", 500, nonNegInt, "a non-negative integer")!;
  return {
    mode,
    levels: flagList(
      get,
      "levels",
      mode === "closed" ? defaults.closedLevels : defaults.openLevels,
      mode === "closed" ? positiveInt : positive,
      mode === "closed" ? "positive integers (users)" : "positive request rates",
    ),
    requests_per_level: flagNumber(
      get,
      "requests",
      duration === null ? 32 : null,
      positiveInt,
      "a positive integer",
    ),
    duration_s: duration,
    warmup_requests: flagNumber(get, "warmup", defaults.warmup, nonNegInt, "a non-negative integer")!,
    prompt_tokens: flagNumber(get, "prompt-tokens", 256, positiveInt, "a positive integer")!,
    max_tokens: flagNumber(get, "max-tokens", 128, positiveInt, "a positive integer")!,
    prompts: flagOneOf(get, "prompts", ["fixed", "sample"] as const, "fixed"),
    ignore_eos: flagBool(get, "ignore-eos", true),
    seed: flagNumber(get, "seed", 1, Number.isInteger, "an integer")!,
    arrival: flagOneOf(get, "arrival", ["poisson", "constant", "gamma"] as const, "poisson"),
    burstiness: flagNumber(get, "burstiness", 1, positive, "a positive number")!,
    max_in_flight: flagNumber(get, "max-in-flight", null, positiveInt, "a positive integer"),
    timeout_s: flagNumber(get, "timeout-s", 300, positive, "a positive number of seconds")!,
    slo: {
      ttft_ms: flagNumber(get, "slo-ttft-ms", null, positive, "a positive number of ms"),
      tpot_ms: flagNumber(get, "slo-tpot-ms", null, positive, "a positive number of ms"),
      e2e_ms: flagNumber(get, "slo-e2e-ms", null, positive, "a positive number of ms"),
    },
    extra_body: flagJsonObject(get, "extra-body"),
    metrics_interval_ms: metrics === 0 ? null : metrics,
    header_names: headerNames,
  };
}
