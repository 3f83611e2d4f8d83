/**
 * Every Action input, parsed and validated in one place. A bad input fails the step with a
 * message naming it. Pure: takes a getter, so tests need no runner.
 */
import type { SweepConfig } from "../schema/v1.ts";

export class InputError extends Error {
  constructor(
    readonly input: string,
    message: string,
  ) {
    super(`input "${input}": ${message}`);
  }
}

export interface ActionInputs {
  /** Publish-only mode: results written by an earlier job (fork-safe workflow_run pattern). */
  publishResults: string | null;
  baseUrl: string;
  model: string | null;
  api: "chat" | "completions";
  serverApiKey: string | null;
  serverCommand: string | null;
  readyTimeoutS: number;
  timeoutS: number;
  sweep: SweepConfig;
  profile: boolean;
  profileTargets: number[];
  profileRepetitions: number;
  testbed: string | null;
  resultsUrl: string | null;
  audience: string;
  apiToken: string | null;
  githubToken: string | null;
  comment: boolean;
  failOnRegression: boolean;
  failOnUploadError: boolean;
  artifactName: string;
  dashboardUrl: string | null;
  resultsDir: string;
}

type Get = (name: string) => string;

function str(get: Get, name: string): string | null {
  const v = get(name).trim();
  return v === "" ? null : v;
}
function num(
  get: Get,
  name: string,
  def: number | null,
  ok: (n: number) => boolean,
  what: string,
): number | null {
  const v = str(get, name);
  if (v === null) return def;
  const n = Number(v);
  if (!Number.isFinite(n) || !ok(n)) throw new InputError(name, `must be ${what}, got "${v}"`);
  return n;
}
function bool(get: Get, name: string, def: boolean): boolean {
  const v = str(get, name);
  if (v === null) return def;
  if (/^(true|yes|1|on)$/i.test(v)) return true;
  if (/^(false|no|0|off)$/i.test(v)) return false;
  throw new InputError(name, `must be true or false, got "${v}"`);
}
function list(get: Get, name: string, def: number[], ok: (n: number) => boolean, what: string): number[] {
  const v = str(get, name);
  if (v === null) return def;
  const parts = v.split(",").map((s) => s.trim());
  const out = parts.map(Number);
  if (parts.some((p) => p === "") || out.some((n) => !Number.isFinite(n) || !ok(n))) {
    throw new InputError(name, `must be a comma-separated list of ${what}, got "${v}"`);
  }
  return out;
}
function url(get: Get, name: string): string | null {
  const v = str(get, name);
  if (v === null) return null;
  try {
    const u = new URL(v);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    throw new InputError(name, `must be an http(s) URL, got "${v}"`);
  }
  return v.replace(/\/+$/, "");
}
function oneOf<T extends string>(get: Get, name: string, allowed: readonly T[], def: T): T {
  const v = str(get, name);
  if (v === null) return def;
  if (!allowed.includes(v as T))
    throw new InputError(name, `must be one of ${allowed.join(", ")}, got "${v}"`);
  return v as T;
}
function jsonObject(get: Get, name: string): Record<string, unknown> {
  const v = str(get, name);
  if (v === null) return {};
  let p: unknown;
  try {
    p = JSON.parse(v);
  } catch {
    throw new InputError(name, "must be a JSON object (invalid JSON)");
  }
  if (p === null || typeof p !== "object" || Array.isArray(p))
    throw new InputError(name, "must be a JSON object");
  return p as Record<string, unknown>;
}

const posInt = (n: number) => Number.isInteger(n) && n > 0;
const nonNegInt = (n: number) => Number.isInteger(n) && n >= 0;
const pos = (n: number) => n > 0;

export function readInputs(get: Get): ActionInputs {
  const mode = oneOf(get, "mode", ["closed", "open"] as const, "closed");
  const duration = num(get, "duration", null, pos, "a positive number of seconds");
  const publishResults = str(get, "publish-results");
  const baseUrl = url(get, "base-url");
  if (baseUrl === null && publishResults === null)
    throw new InputError("base-url", "is required (unless publish-results is set)");
  const resultsUrl = url(get, "results-url");
  const metrics = num(get, "metrics-interval-ms", 500, nonNegInt, "a non-negative integer")!;
  const sweep: SweepConfig = {
    mode,
    levels: list(
      get,
      "levels",
      [1, 4, 16],
      mode === "closed" ? posInt : pos,
      mode === "closed" ? "positive integers" : "positive rates",
    ),
    requests_per_level: num(get, "requests", duration === null ? 32 : null, posInt, "a positive integer"),
    duration_s: duration,
    warmup_requests: num(get, "warmup", 2, nonNegInt, "a non-negative integer")!,
    prompt_tokens: num(get, "prompt-tokens", 256, posInt, "a positive integer")!,
    max_tokens: num(get, "max-tokens", 128, posInt, "a positive integer")!,
    prompts: oneOf(get, "prompts", ["fixed", "sample"] as const, "fixed"),
    ignore_eos: bool(get, "ignore-eos", true),
    seed: num(get, "seed", 1, Number.isInteger, "an integer")!,
    arrival: oneOf(get, "arrival", ["poisson", "constant", "gamma"] as const, "poisson"),
    burstiness: num(get, "burstiness", 1, pos, "a positive number")!,
    max_in_flight: num(get, "max-in-flight", null, posInt, "a positive integer"),
    timeout_s: num(get, "timeout-s", 300, pos, "a positive number of seconds")!,
    slo: {
      ttft_ms: num(get, "slo-ttft-ms", null, pos, "a positive number of ms"),
      tpot_ms: num(get, "slo-tpot-ms", null, pos, "a positive number of ms"),
      e2e_ms: num(get, "slo-e2e-ms", null, pos, "a positive number of ms"),
    },
    extra_body: jsonObject(get, "extra-body"),
    metrics_interval_ms: metrics === 0 ? null : metrics,
    header_names: [],
  };
  return {
    publishResults,
    baseUrl: baseUrl ?? "",
    model: str(get, "model"),
    api: oneOf(get, "api", ["chat", "completions"] as const, "chat"),
    serverApiKey: str(get, "server-api-key"),
    serverCommand: str(get, "server-command"),
    readyTimeoutS: num(get, "ready-timeout-s", 900, pos, "a positive number of seconds")!,
    timeoutS: sweep.timeout_s,
    sweep,
    profile: bool(get, "profile", false),
    profileTargets: list(get, "profile-targets", [512, 1024, 2048, 4096], posInt, "positive integers"),
    profileRepetitions: num(get, "profile-repetitions", 3, posInt, "a positive integer")!,
    testbed: str(get, "testbed"),
    resultsUrl,
    audience: str(get, "audience") ?? "tokenbench",
    apiToken: str(get, "api-token"),
    githubToken: str(get, "github-token"),
    comment: bool(get, "comment", true),
    failOnRegression: bool(get, "fail-on-regression", false),
    failOnUploadError: bool(get, "fail-on-upload-error", false),
    artifactName: str(get, "artifact-name") ?? "tokenbench-results",
    dashboardUrl: url(get, "dashboard-url") ?? resultsUrl,
    resultsDir: str(get, "results-dir") ?? "tokenbench-results",
  };
}
