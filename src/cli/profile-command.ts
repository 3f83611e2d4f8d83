/** `tokenbench profile`: the single-stream serving protocol from the command line. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { profileSummaryText, runProfile } from "../core/profile/profile.ts";
import { assertWritable } from "../core/results/files.ts";
import { makeTarget } from "../core/server/target.ts";
import { CLI_OUTPUT, CONNECTION, PROFILE, PROFILE_OUT, profileConfigOf } from "../core/settings/table.ts";
import { UsageError } from "../schema/errors.ts";
import { parseResultDocument } from "../schema/v1.ts";
import { noticePrinter, parseCommand, writePlotsBeside } from "./command.ts";

const { plots, quiet } = CLI_OUTPUT;
const TABLE = { ...CONNECTION, ...PROFILE, out: PROFILE_OUT, plots, quiet };
const INTRO = `tokenbench profile: single-stream serving profile (readiness, metadata, calibration,
fresh prefill, steady decode, prefix cache)`;
const GROUPS = [
  { title: "Connection", settings: Object.values(CONNECTION) },
  { title: "Profile", settings: Object.values(PROFILE) },
  { title: "Output", settings: [PROFILE_OUT, plots, quiet] },
];

export async function profileCommand(argv: string[]): Promise<number> {
  const parsed = parseCommand(argv, TABLE, INTRO, GROUPS);
  if (parsed === null) return 0;
  const v = parsed.values;
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  assertWritable(v.out);
  const doc = await runProfile({
    target: makeTarget(v),
    timeoutS: v.timeoutS,
    serverLimits: v.serverLimits,
    config: profileConfigOf(v, v),
    onNotice: noticePrinter(v.quiet),
  });
  parseResultDocument(doc);
  mkdirSync(dirname(v.out), { recursive: true });
  writeFileSync(v.out, `${JSON.stringify(doc, null, 1)}\n`);
  process.stdout.write(`${profileSummaryText(doc)}\n`);
  if (!v.quiet) process.stderr.write(`wrote ${v.out}\n`);
  if (v.plots) await writePlotsBeside(doc, v.out);
  return 0;
}
