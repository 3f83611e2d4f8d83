/** Flag parsing helpers shared by the subcommands. Bad flags raise UsageError (exit code 2). */
import { type ParseArgsConfig, parseArgs } from "node:util";

export class UsageError extends Error {}

export function parse(argv: string[], options: NonNullable<ParseArgsConfig["options"]>) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export function str(v: Values, name: string, def: string): string;
export function str(v: Values, name: string, def: null): string | null;
export function str(v: Values, name: string, def: string | null): string | null {
  const x = v[name];
  return typeof x === "string" ? x : def;
}

export function num(
  v: Values,
  name: string,
  def: number | null,
  check: (n: number) => boolean,
  what: string,
) {
  const x = v[name];
  if (x === undefined) return def;
  const n = Number(x);
  if (typeof x !== "string" || x.trim() === "" || !Number.isFinite(n) || !check(n)) {
    throw new UsageError(`--${name} must be ${what}, got "${String(x)}"`);
  }
  return n;
}

export const positiveInt = (n: number) => Number.isInteger(n) && n > 0;
export const nonNegInt = (n: number) => Number.isInteger(n) && n >= 0;
export const positive = (n: number) => n > 0;
export const nonNeg = (n: number) => n >= 0;

export function oneOf<T extends string>(v: Values, name: string, allowed: readonly T[], def: T): T {
  const x = v[name];
  if (x === undefined) return def;
  if (typeof x !== "string" || !allowed.includes(x as T)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(", ")}, got "${String(x)}"`);
  }
  return x as T;
}

export function bool(v: Values, name: string, def: boolean): boolean {
  const x = v[name];
  if (x === undefined) return def;
  if (x === true || x === "true" || x === "1" || x === "yes") return true;
  if (x === "false" || x === "0" || x === "no") return false;
  throw new UsageError(`--${name} must be true or false, got "${String(x)}"`);
}

export function numberList(
  v: Values,
  name: string,
  def: number[],
  check: (n: number) => boolean,
  what: string,
): number[] {
  const x = v[name];
  if (x === undefined) return def;
  if (typeof x !== "string") throw new UsageError(`--${name} needs a value`);
  const parts = x.split(",").map((s) => s.trim());
  const out = parts.map((p) => Number(p));
  if (
    parts.length === 0 ||
    parts.some((p) => p === "") ||
    out.some((n) => !Number.isFinite(n) || !check(n))
  ) {
    throw new UsageError(`--${name} must be a comma-separated list of ${what}, got "${x}"`);
  }
  if (new Set(out).size !== out.length) throw new UsageError(`--${name} has duplicate values: "${x}"`);
  return out;
}

export function jsonObject(v: Values, name: string): Record<string, unknown> {
  const x = v[name];
  if (x === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(x));
  } catch {
    throw new UsageError(`--${name} must be a JSON object, got invalid JSON: ${String(x).slice(0, 80)}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UsageError(`--${name} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

export function headerList(v: Values, name: string): Record<string, string> {
  const x = v[name];
  const list = x === undefined ? [] : Array.isArray(x) ? x : [x];
  const out: Record<string, string> = {};
  for (const h of list) {
    const s = String(h);
    const i = s.indexOf(":");
    if (i <= 0) throw new UsageError(`--${name} must look like "Name: value", got "${s}"`);
    out[s.slice(0, i).trim().toLowerCase()] = s.slice(i + 1).trim();
  }
  return out;
}

export function httpUrl(v: Values, name: string, def: string): string {
  const s = str(v, name, def);
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new UsageError(`--${name} must be an http(s) URL, got "${s}"`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new UsageError(`--${name} must be http(s), got "${s}"`);
  return s.replace(/\/+$/, "");
}
