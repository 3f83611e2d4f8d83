/** `tokenbench sweep`: settings → target and SweepConfig → runSweep → files + Markdown on stdout. */
import { resolveModel } from "../core/http.ts";
import { markdownTable } from "../core/report.ts";
import { outputPaths } from "../core/results-file.ts";
import { CLI_OUTPUT, CONNECTION, SWEEP, SWEEP_OUT, sweepConfigOf } from "../core/setting-table.ts";
import { type Progress, runSweep } from "../core/sweep.ts";
import { makeTarget } from "../core/target.ts";
import { UsageError } from "../schema/errors.ts";
import { noticePrinter, parseCommand, writePlotsBeside } from "./command.ts";

const { readyTimeoutS: _notYet, ...SWEEP_CONNECTION } = CONNECTION;
const TABLE = { ...SWEEP_CONNECTION, ...SWEEP, out: SWEEP_OUT, ...CLI_OUTPUT };
const INTRO = "tokenbench sweep: latency and throughput across concurrency levels or request rates";
const { records, resume, plots, quiet } = CLI_OUTPUT;
const GROUPS = [
  { title: "Connection", settings: Object.values(SWEEP_CONNECTION) },
  { title: "Load and workload", settings: Object.values(SWEEP) },
  { title: "Output", settings: [SWEEP_OUT, records, resume, plots, quiet] },
];

export function progressPrinter(quiet: boolean): ((p: Progress) => void) | undefined {
  if (quiet) return undefined;
  const tty = process.stderr.isTTY === true;
  let lastLine = 0;
  return (p) => {
    const total = p.total === null ? "?" : String(p.total);
    const eta = p.etaS === null ? "?" : `${p.etaS.toFixed(0)}s`;
    const line = `level ${p.level} [${p.levelIndex + 1}/${p.levelCount}] ${p.done}/${total} requests, ${p.elapsedS.toFixed(1)}s elapsed, ETA ${eta}`;
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else if (performance.now() - lastLine > 10_000 || (p.total !== null && p.done === p.total)) {
      lastLine = performance.now();
      process.stderr.write(`${line}\n`);
    }
  };
}

export async function sweepCommand(argv: string[]): Promise<number> {
  const parsed = parseCommand(argv, TABLE, INTRO, GROUPS);
  if (parsed === null) return 0;
  const v = parsed.values;
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const config = sweepConfigOf(v, v);
  if (config.mode === "open" && config.requests_per_level === null && config.duration_s === null) {
    throw new UsageError("open loop needs --requests or --duration");
  }
  const target = await resolveModel(makeTarget(v));
  let stop = false;
  const onSig = () => {
    if (stop) process.exit(130);
    stop = true;
    process.stderr.write(
      "\ninterrupted: finishing the level in progress is abandoned; finished levels are saved\n",
    );
  };
  process.on("SIGINT", onSig);
  process.on("SIGTERM", onSig);
  const progress = progressPrinter(v.quiet);
  const doc = await runSweep({
    target,
    config,
    out: v.out,
    records: v.records,
    resume: v.resume,
    serverLimits: v.serverLimits,
    onNotice: noticePrinter(),
    ...(progress ? { onProgress: progress } : {}),
    onLevel: () => {
      if (process.stderr.isTTY && !v.quiet) process.stderr.write("\r\x1b[K");
    },
    shouldStop: () => stop,
  });
  process.off("SIGINT", onSig);
  process.off("SIGTERM", onSig);
  process.stdout.write(`${markdownTable(doc.levels)}\n`);
  const p = outputPaths(v.out);
  process.stderr.write(
    `wrote ${p.json}, ${p.csv}, ${p.md}${v.records === "file" ? `, ${p.requestsFile}` : ""}\n`,
  );
  if (v.plots) await writePlotsBeside(doc, v.out);
  if (stop) return 130;
  const measured = doc.levels.reduce((n, l) => n + l.requests, 0);
  const ok = doc.levels.reduce((n, l) => n + l.ok, 0);
  if (measured > 0 && ok === 0) {
    process.stderr.write("error: every request failed; see errors_by_code in the results\n");
    return 1;
  }
  return 0;
}
