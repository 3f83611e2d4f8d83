/**
 * The CLI's side of the settings: argv parsed against a table (with "did you mean" for unknown
 * flags) and `--help` written from the same declarations.
 */

import { UsageError } from "../../schema/errors.ts";
import { FOREIGN_FLAGS } from "./foreign-flags.ts";
import { type AnySetting, isBooleanWord, type Source } from "./setting.ts";

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
      const foreign = FOREIGN_FLAGS[name];
      if (foreign)
        throw new UsageError(
          `unknown flag --${name}: that is ${foreign.from}'s; here it is ${foreign.answer}`,
          `--${name}`,
        );
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
