/** `tokenbench sweep`: settings → target and SweepConfig → runSweep → files + Markdown on stdout. */

import { existsSync } from "node:fs";
import { loadGeneratorOf, runSaltOf } from "../core/load/load-generator.ts";
import { assertWritable, outputPaths, readResults } from "../core/results/files.ts";
import { markdownReport } from "../core/results/report.ts";
import { preflight } from "../core/server/preflight.ts";
import { makeTarget } from "../core/server/target.ts";
import { CLI_OUTPUT, CONNECTION, LOAD, SWEEP, SWEEP_OUT, sweepConfigOf } from "../core/settings/table.ts";
import { type Progress, runSweep } from "../core/sweep/sweep.ts";
import { loadDataset } from "../core/workload/dataset.ts";
import { loadTrace, traceReplay } from "../core/workload/trace.ts";
import { UsageError } from "../schema/errors.ts";
import type { ResultDocument } from "../schema/v1.ts";
import { noticePrinter, parseCommand, writePlotsBeside } from "./command.ts";

const TABLE = { ...CONNECTION, ...SWEEP, ...LOAD, out: SWEEP_OUT, ...CLI_OUTPUT };
const INTRO = "tokenbench sweep: latency and throughput across concurrency levels or request rates";
const { records, resume, plots, quiet } = CLI_OUTPUT;
const GROUPS = [
  { title: "Connection", settings: Object.values(CONNECTION) },
  { title: "Load and workload", settings: Object.values(SWEEP) },
  { title: "Load generators (threads, runners)", settings: Object.values(LOAD) },
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

/** 0 when every level's error rate is within the limit, else 1 with the levels named on stderr. */
export function exitStatus(doc: ResultDocument, maxErrorRatePct: number): number {
  const over = doc.levels.filter((l) => l.requests > 0 && (100 * l.errors) / l.requests > maxErrorRatePct);
  if (over.length > 0) {
    const which = over.map((l) => `level ${l.level}: ${l.errors} of ${l.requests} failed`).join("; ");
    process.stderr.write(
      `error: more than ${maxErrorRatePct}% of requests failed (${which}); everything measured is in the results (--max-error-rate sets the limit)\n`,
    );
    return 1;
  }
  if (!doc.complete) {
    process.stderr.write("error: the sweep did not finish its levels (complete: false)\n");
    return 1;
  }
  return 0;
}

export async function sweepCommand(argv: string[]): Promise<number> {
  const parsed = parseCommand(argv, TABLE, INTRO, GROUPS);
  if (parsed === null) return 0;
  const v = parsed.values;
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const config = sweepConfigOf(v, v);
  let dataset = v.dataset !== null ? loadDataset(v.dataset) : null;
  if (dataset) config.dataset = { name: dataset.name, lines: dataset.lines, sha256: dataset.sha256 };
  const trace = v.trace !== null ? loadTrace(v.trace) : null;
  const replay = trace ? traceReplay(trace, config, v.traceSpeed, v.requests) : null;
  if (config.mode === "open" && config.requests_per_level === null && config.duration_s === null) {
    throw new UsageError("open loop needs --requests or --duration");
  }
  const load = loadGeneratorOf(v, config, makeTarget(v));
  const notice = noticePrinter(v.quiet);
  assertWritable(v.out);
  // A checkpoint that cannot be resumed is found before any load is sent.
  if (v.resume && existsSync(v.out)) readResults(v.out);
  const pre = await preflight(makeTarget(v), config, {
    readyTimeoutS: v.readyTimeoutS,
    serverLimits: v.serverLimits,
    calibrate: v.calibratePrompts,
    onNotice: notice,
    ...(replay ? { longest: replay.longest } : {}),
  });
  // A trace's prompts are sized once the server's token count is known.
  const salt = runSaltOf(load);
  if (trace) dataset = replay!.build(pre.calibration, salt);
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
    target: pre.target,
    server: pre.server,
    promptCalibration: pre.calibration,
    config,
    out: v.out,
    records: v.records,
    resume: v.resume,
    serverLimits: v.serverLimits,
    onNotice: notice,
    ...(progress ? { onProgress: progress } : {}),
    onLevel: () => {
      if (process.stderr.isTTY && !v.quiet) process.stderr.write("\r\x1b[K");
    },
    shouldStop: () => stop,
    load,
    dataset,
    salt,
  });
  process.off("SIGINT", onSig);
  process.off("SIGTERM", onSig);
  // (with --mode search, the report's saturation paragraph is the headline line)
  process.stdout.write(`${markdownReport(doc)}\n`);
  const p = outputPaths(v.out);
  if (!v.quiet)
    process.stderr.write(
      `wrote ${p.json}, ${p.csv}, ${p.md}${v.records === "file" ? `, ${p.requestsFile}` : ""}\n`,
    );
  if (v.plots) await writePlotsBeside(doc, v.out);
  if (stop) return 130;
  return exitStatus(doc, v.maxErrorRate);
}
