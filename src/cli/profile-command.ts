/** `tokenbench profile`: the single-stream serving protocol from the command line. */
import { profileConfigOf, runProfile } from "../core/profile/profile.ts";
import { profileSummaryText } from "../core/profile/summary.ts";
import { assertWritable, writeResults } from "../core/results/files.ts";
import { preflight } from "../core/server/preflight.ts";
import { makeTarget } from "../core/server/target.ts";
import { CLI_OUTPUT, CONNECTION, PROFILE, PROFILE_OUT } from "../core/settings/table.ts";
import { UsageError } from "../schema/errors.ts";
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
  const notice = noticePrinter(v.quiet);
  const config = profileConfigOf(v, v);
  const pre = await preflight(makeTarget(v), null, {
    readyTimeoutS: config.ready_timeout_s,
    serverLimits: v.serverLimits,
    calibrate: false,
    onNotice: notice,
  });
  const doc = await runProfile({ pre, timeoutS: v.timeoutS, config, onNotice: notice });
  writeResults(doc, v.out, doc.requests ?? [], "inline");
  process.stdout.write(`${profileSummaryText(doc)}\n`);
  if (!v.quiet) process.stderr.write(`wrote ${v.out}\n`);
  if (v.plots) await writePlotsBeside(doc, v.out);
  return 0;
}
