/**
 * The settings machinery: a setting is declared once (CLI flag, Action input, type, default,
 * check, help) and everything else is derived from the declaration: the CLI's argv parsing and
 * `--help`, the Action's input parsing, and the test that holds `action.yml` to the table.
 * The declarations are in table.ts (and sweep-table.ts, action-table.ts); argv.ts reads the CLI.
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
  /** A credential: the Action masks its value in every log line, file and comment it writes. */
  readonly secret: boolean;
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
  secret?: boolean;
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
    secret: o.secret ?? false,
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

function checkedUrl(v: string, label: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw problem(label, `must be an http(s) URL, got "${v}"`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw problem(label, `must be http(s), got "${v}"`);
  return v.replace(/\/+$/, "");
}

export function httpUrl<T extends string | null>(o: Common<T> & { flag: string | null }): Setting<T> {
  return setting(o, "URL", (raw, label) => checkedUrl(last(raw), label) as T);
}

/** One http(s) URL or several, comma-separated (each checked; the same one twice is refused). */
export function httpUrls(o: Common<string> & { flag: string | null }): Setting<string> {
  return setting(o, "URL[,URL...]", (raw, label) => {
    const urls = last(raw)
      .split(",")
      .map((u) => u.trim())
      .filter((u) => u !== "")
      .map((u) => checkedUrl(u, label));
    if (urls.length === 0) throw problem(label, "must name at least one http(s) URL");
    const twice = urls.find((u, i) => urls.indexOf(u) !== i);
    if (twice !== undefined) throw problem(label, `names the same server twice ("${twice}")`);
    return urls.join(",");
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

/** Defaults of a table (no source), for tests, scripts and embedding. */
export function defaultsOf<T extends Record<string, { default: unknown }>>(
  t: T,
): { [K in keyof T]: T[K]["default"] } {
  return Object.fromEntries(Object.entries(t).map(([k, s]) => [k, s.default])) as {
    [K in keyof T]: T[K]["default"];
  };
}
