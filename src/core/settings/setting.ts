/**
 * The settings machinery: a setting is declared once (CLI flag, Action input, type, default,
 * check, help) and everything else is derived from the declaration: the CLI's argv parsing and
 * `--help`, the Action's input parsing, and the test that holds `action.yml` to the table.
 * The table itself is in setting-table.ts.
 */
import { UsageError } from "../../schema/errors.ts";

/** Where a value came from, for messages: `--levels` or `input "levels"`. */
export interface Source {
  /** The raw value(s), or undefined when the setting was not given. */
  get(s: AnySetting): string | string[] | undefined;
  label(s: AnySetting): string;
}

export interface Setting<T> {
  /** CLI flag without dashes, or null when the CLI has no such flag. */
  readonly flag: string | null;
  /** Action input name, or null when the Action has no such input. */
  readonly input: string | null;
  readonly help: string;
  /** Placeholder in --help, e.g. `N`, `URL`; empty for flags that take no value. */
  readonly metavar: string;
  readonly default: T;
  /** How the default reads in --help and action.yml (null: not shown, no default declared). */
  readonly defaultText: string | null;
  /** Repeatable flag (`--header` twice); an Action input takes one value per line. */
  readonly multiple: boolean;
  /** A switch: `--plots` alone means true (`--plots=false` and `--plots false` also work). */
  readonly switch: boolean;
  /** Environment variables read (CLI only) when the flag is absent. */
  readonly env: readonly string[];
  parse(raw: string[], label: string): T;
}
// biome-ignore lint/suspicious/noExplicitAny: a table holds settings of every value type
export type AnySetting = Setting<any>;
export type Values<T extends Record<string, AnySetting>> = { [K in keyof T]: T[K]["default"] };

interface Common<T> {
  flag?: string | null;
  /** Defaults to the flag's name; null when the Action has no such input. */
  input?: string | null;
  help: string;
  metavar?: string;
  default: T;
  defaultText?: string | null;
  env?: readonly string[];
}

const problem = (label: string, text: string) => new UsageError(`${label} ${text}`, label);
const last = (raw: string[]) => raw[raw.length - 1]!.trim();

function setting<T>(
  o: Common<T> & { multiple?: boolean; switch?: boolean },
  metavar: string,
  parse: (raw: string[], label: string) => T,
): Setting<T> {
  const flag = o.flag === undefined ? null : o.flag;
  return {
    flag,
    input: o.input === undefined ? flag : o.input,
    help: o.help,
    metavar: o.metavar ?? metavar,
    default: o.default,
    defaultText:
      o.defaultText !== undefined
        ? o.defaultText
        : o.default === null || (Array.isArray(o.default) && o.default.length === 0)
          ? null
          : Array.isArray(o.default)
            ? o.default.join(",")
            : typeof o.default === "object"
              ? null
              : String(o.default),
    multiple: o.multiple ?? false,
    switch: o.switch ?? false,
    env: o.env ?? [],
    parse,
  };
}

export const positiveInt = (n: number) => Number.isInteger(n) && n > 0;
export const nonNegInt = (n: number) => Number.isInteger(n) && n >= 0;
export const positive = (n: number) => n > 0;
export const nonNeg = (n: number) => n >= 0;
export const anyInt = (n: number) => Number.isInteger(n);

const TRUE = /^(true|yes|1|on)$/i;
const FALSE = /^(false|no|0|off)$/i;
export const isBooleanWord = (s: string) => TRUE.test(s.trim()) || FALSE.test(s.trim());

export function text<T extends string | null>(o: Common<T> & { flag: string | null }): Setting<T> {
  return setting(o, "TEXT", (raw) => last(raw) as T);
}

export function number<T extends number | null>(
  o: Common<T> & { flag: string | null; check: (n: number) => boolean; what: string },
): Setting<T> {
  return setting(o, "N", (raw, label) => {
    const v = last(raw);
    const n = Number(v);
    if (v === "" || !Number.isFinite(n) || !o.check(n)) throw problem(label, `must be ${o.what}, got "${v}"`);
    return n as T;
  });
}

/** A value read by `read`, which returns it or, for a bad value, a problem to report. */
export function custom<T>(
  o: Common<T> & { flag: string | null; metavar: string },
  read: (v: string) => T | { problem: string },
): Setting<T> {
  return setting(o, o.metavar, (raw, label) => {
    const r = read(last(raw));
    if (r !== null && typeof r === "object" && "problem" in r) throw problem(label, r.problem);
    return r as T;
  });
}

export function boolean(o: Common<boolean> & { flag: string | null; switch?: boolean }): Setting<boolean> {
  return setting({ ...o, switch: o.switch ?? false }, o.switch ? "" : "true|false", (raw, label) => {
    const v = last(raw);
    if (TRUE.test(v)) return true;
    if (FALSE.test(v)) return false;
    throw problem(label, `must be true or false, got "${v}"`);
  });
}

export function oneOf<const C extends readonly string[]>(
  o: Common<NoInfer<C[number]>> & { flag: string | null; choices: C },
): Setting<C[number]> {
  return setting(o, o.choices.join("|"), (raw, label) => {
    const v = last(raw);
    if (!o.choices.includes(v)) throw problem(label, `must be one of ${o.choices.join(", ")}, got "${v}"`);
    return v as C[number];
  });
}

export function numbers(
  o: Common<number[]> & { flag: string | null; check: (n: number) => boolean; what: string },
): Setting<number[]> {
  return setting(o, "LIST", (raw, label) => {
    const v = last(raw);
    const parts = v.split(",").map((s) => s.trim());
    const out = parts.map(Number);
    if (v === "" || parts.some((p) => p === "") || out.some((n) => !Number.isFinite(n) || !o.check(n)))
      throw problem(label, `must be a comma-separated list of ${o.what}, got "${v}"`);
    if (new Set(out).size !== out.length) throw problem(label, `has duplicate values: "${v}"`);
    return out;
  });
}

export function jsonObject(
  o: Common<Record<string, unknown>> & { flag: string | null },
): Setting<Record<string, unknown>> {
  return setting(o, "JSON", (raw, label) => {
    const v = last(raw);
    let p: unknown;
    try {
      p = JSON.parse(v);
    } catch {
      throw problem(label, `must be a JSON object, got invalid JSON: ${v.slice(0, 80)}`);
    }
    if (p === null || typeof p !== "object" || Array.isArray(p))
      throw problem(label, "must be a JSON object");
    return p as Record<string, unknown>;
  });
}

export function httpUrl<T extends string | null>(o: Common<T> & { flag: string | null }): Setting<T> {
  return setting(o, "URL", (raw, label) => {
    const v = last(raw);
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw problem(label, `must be an http(s) URL, got "${v}"`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:")
      throw problem(label, `must be http(s), got "${v}"`);
    return v.replace(/\/+$/, "") as T;
  });
}

/** Repeatable `Name: value` pairs (CLI: `--header` twice; Action: one per line). */
export function headers(o: Common<Record<string, string>> & { flag: string | null }) {
  return setting({ ...o, multiple: true }, '"K: V"', (raw, label) => {
    const out: Record<string, string> = {};
    // One header per line (CRLF line ends allowed); a CR or NUL anywhere else is refused.
    const lines = raw.flatMap((r) => r.split("\n")).map((l) => l.replace(/\r$/, ""));
    for (const s of lines.filter((l) => l.trim() !== "")) {
      if (/[\r\0]/.test(s))
        throw problem(
          label,
          "has an invalid header line: a CR or NUL character inside it (its value is not shown)",
        );
      const i = s.indexOf(":");
      if (i <= 0)
        throw problem(
          label,
          `must look like "Name: value"; one line has no name before a ":" (its ${s.length} characters are not shown: it may hold a secret)`,
        );
      const name = s.slice(0, i).trim().toLowerCase();
      const value = s.slice(i + 1).trim();
      if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || /[\r\n\0]/.test(value))
        throw problem(
          label,
          `has an invalid header name or value for ${JSON.stringify(name.slice(0, 60))} (a name is letters, digits and !#$%&'*+.^_\`|~-; a value has no CR, LF or NUL; the value is not shown)`,
        );
      out[name] = value;
    }
    return out;
  });
}

/** Repeatable `key=value` pairs; numeric values become numbers. */
export function keyValues(o: Common<Record<string, string | number>> & { flag: string | null }) {
  return setting({ ...o, multiple: true }, "K=V", (raw, label) => {
    const out: Record<string, string | number> = {};
    for (const s of raw.flatMap((r) => r.split("\n")).filter((s) => s.trim() !== "")) {
      const i = s.indexOf("=");
      if (i <= 0) throw problem(label, `must be key=value, got "${s}"`);
      const v = s.slice(i + 1).trim();
      out[s.slice(0, i).trim()] = v !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
    }
    return out;
  });
}

/** A repeatable free-form value (e.g. `--fault`), parsed one by one. */
export function list<T>(o: Common<T[]> & { flag: string | null; item: (s: string) => T }): Setting<T[]> {
  return setting({ ...o, multiple: true }, o.metavar ?? "VALUE", (raw, label) =>
    raw.map((s) => {
      try {
        return o.item(s.trim());
      } catch (err) {
        throw problem(label, (err as Error).message);
      }
    }),
  );
}

/** Read every setting of a table from one source. */
export function readSettings<T extends Record<string, AnySetting>>(table: T, source: Source): Values<T> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(table)) {
    const raw = source.get(s);
    const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    const given = list.filter((r) => r.trim() !== "");
    // `--levels ""` is a mistake, not a request for the default (an absent Action input never
    // gets here: the input source reads "" as absent).
    if (list.length > 0 && given.length === 0)
      throw problem(source.label(s), "needs a value, got an empty one");
    out[key] = given.length === 0 ? s.default : s.parse(given, source.label(s));
  }
  return out as Values<T>;
}

// ---- the CLI: argv -> values, --help ----------------------------------------------------------

export interface ParsedArgv {
  positionals: string[];
  help: boolean;
  source: Source;
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]!;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = d[j]!;
      d[j] = Math.min(d[j]! + 1, d[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return d[b.length]!;
}

/** The closest known name, when it is close enough to be what the user meant. */
export function didYouMean(name: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const dist = k.startsWith(name) || name.startsWith(k) ? 1 : editDistance(name, k);
    if (dist < bestD) {
      bestD = dist;
      best = k;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : null;
}

/**
 * Parse argv against a table. `--flag value`, `--flag=value` (the value may start with a dash:
 * `--seed -5`), switches alone or with a boolean word (`--plots`, `--plots=false`,
 * `--plots false`), repeatable flags, `--` ends the flags. Unknown flags are usage errors that
 * name the closest known flag.
 */
export function parseArgv(argv: readonly string[], table: Record<string, AnySetting>): ParsedArgv {
  const byFlag = new Map<string, AnySetting>();
  for (const s of Object.values(table)) if (s.flag !== null) byFlag.set(s.flag, s);
  const given = new Map<AnySetting, string[]>();
  const positionals: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === "-h" || a === "--help") {
      help = true;
      continue;
    }
    if (!a.startsWith("--") || a === "--") {
      if (a.startsWith("-") && a.length > 1 && Number.isNaN(Number(a)))
        throw new UsageError(`unknown option "${a}" (flags are spelled --name)`);
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = a.slice(2, eq === -1 ? undefined : eq);
    const s = byFlag.get(name);
    if (s === undefined) {
      const guess = didYouMean(name, [...byFlag.keys()]);
      throw new UsageError(`unknown flag --${name}${guess ? ` (did you mean --${guess}?)` : ""}`);
    }
    let value: string;
    if (eq !== -1) value = a.slice(eq + 1);
    else if (s.switch) {
      const next = argv[i + 1];
      value = "true";
      if (next !== undefined && isBooleanWord(next)) {
        value = next;
        i++;
      }
    } else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("--") && next.length > 2))
        throw new UsageError(`--${name} needs a value (${s.metavar || "a value"})`, `--${name}`);
      value = next;
      i++;
    }
    // Repeatable flags collect every value; for the others the last one wins.
    given.set(s, s.multiple ? [...(given.get(s) ?? []), value] : [value]);
  }
  return {
    positionals,
    help,
    source: {
      get: (s) => {
        const v = given.get(s);
        if (v !== undefined) return v;
        for (const e of s.env) if (process.env[e]) return process.env[e];
        return undefined;
      },
      label: (s) => `--${s.flag}`,
    },
  };
}

export interface HelpGroup {
  title: string;
  settings: AnySetting[];
}

/** `--help` text from the table: one line per flag with its placeholder, help and default. */
export function helpText(intro: string, groups: readonly HelpGroup[]): string {
  const lines = [intro.trimEnd(), ""];
  for (const g of groups) {
    lines.push(`${g.title}:`);
    for (const s of g.settings) {
      if (s.flag === null) continue;
      const left = `  --${s.flag}${s.metavar ? ` ${s.metavar}` : ""}`;
      const def = s.defaultText !== null ? ` (default ${s.defaultText})` : "";
      const env = s.env.length > 0 ? ` [env: ${s.env.map((e) => `$${e}`).join(", ")}]` : "";
      const right = `${s.help}${def}${env}${s.multiple ? " (repeatable)" : ""}`;
      lines.push(left.length < 30 ? `${left.padEnd(30)}${right}` : `${left}\n${" ".repeat(30)}${right}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

// ---- the Action: inputs -> values ---------------------------------------------------------------

/** The Action's inputs as a source (`core.getInput`: an absent input reads as ""). */
export function inputSource(get: (name: string) => string): Source {
  return {
    get: (s) => {
      if (s.input === null) return undefined;
      const v = get(s.input);
      if (v.trim() === "") return undefined;
      return s.multiple ? v.split("\n") : v;
    },
    label: (s) => `input "${s.input}":`,
  };
}
