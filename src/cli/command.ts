/** What every subcommand does with its argv: parse it against its settings, or print --help. */

import { timingNoteMs } from "../core/results/report.ts";
import { type HelpGroup, helpText, parseArgv } from "../core/settings/argv.ts";
import { type AnySetting, readSettings, type Values } from "../core/settings/setting.ts";

export interface Parsed<T extends Record<string, AnySetting>> {
  values: Values<T>;
  positionals: string[];
}

/** Parse argv; on --help, print the help built from the same settings and return null. */
export function parseCommand<T extends Record<string, AnySetting>>(
  argv: readonly string[],
  table: T,
  intro: string,
  groups: readonly HelpGroup[] = [{ title: "Flags", settings: Object.values(table) }],
): Parsed<T> | null {
  const p = parseArgv(argv, table);
  if (p.help) {
    process.stdout.write(helpText(intro, groups));
    return null;
  }
  return { values: readSettings(table, p.source), positionals: p.positionals };
}

/** Notices on stderr, each printed once (none when `silent`: --quiet prints only errors). */

/**
 * Notices on stderr, each once. The self-check's timing note (the machine woke the client late)
 * is printed in full once per sweep; a later level says so in one short line only when its
 * reading moved by more than half (the full text of every level stays in the JSON).
 */
export function noticePrinter(silent = false): (m: string) => void {
  const seen = new Set<string>();
  let timingMs: number | null = null;
  const write = (m: string) =>
    process.stderr.write(`${process.stderr.isTTY ? "\r\x1b[K" : ""}notice: ${m}\n`);
  return (m) => {
    if (silent || seen.has(m)) return;
    seen.add(m);
    // A level's notices arrive as "level 4: <notice>".
    const lv = /^level (\S+): /.exec(m);
    const ms = lv ? timingNoteMs(m.slice(lv[0].length)) : null;
    if (ms === null) return write(m);
    if (timingMs === null) write(`${m} (said once; each level's reading is in the JSON)`);
    else if (Math.abs(ms - timingMs) > timingMs / 2)
      write(`level ${lv![1]}: timing noise now about ${ms.toFixed(1)} ms (was ${timingMs.toFixed(1)} ms)`);
    else return;
    timingMs = ms;
  };
}

export const plotsDir = (jsonPath: string) => `${jsonPath.replace(/\.json$/i, "")}-plots`;

/** Charts beside a results file (loaded on demand: vega and resvg are heavy). */
export async function writePlotsBeside(
  doc: Parameters<typeof import("../core/results/plots.ts").writePlots>[0],
  out: string,
) {
  const { writePlots } = await import("../core/results/plots.ts");
  const files = await writePlots(doc, plotsDir(out));
  process.stderr.write(`wrote ${files.length} charts to ${plotsDir(out)}\n`);
}
