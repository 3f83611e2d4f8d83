/** What every subcommand does with its argv: parse it against its settings, or print --help. */

import { noticeWriter } from "../core/results/notices.ts";
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

/** Notices on stderr, one line per level, each once (none when `silent`: --quiet prints only errors). */
export function noticePrinter(silent = false): (m: string) => void {
  return noticeWriter(
    (line) => process.stderr.write(`${process.stderr.isTTY ? "\r\x1b[K" : ""}notice: ${line}\n`),
    silent,
  );
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
