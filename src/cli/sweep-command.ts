/** `tokenbench sweep`: parse the settings, prepare the sweep (sweep/prepare.ts), run it, write it. */

import { existsSync } from "node:fs";
import { assertWritable, outputPaths, readResults } from "../core/results/files.ts";
import { markdownReport } from "../core/results/report.ts";
import { stopServer } from "../core/server/server-process.ts";
import { SWEEP } from "../core/settings/sweep-table.ts";
import { CLI_OUTPUT, CONNECTION, LOAD, SWEEP_OUT } from "../core/settings/table.ts";
import { sweepConfigOf } from "../core/sweep/config.ts";
import { prepareSweep } from "../core/sweep/prepare.ts";
import { type Progress, runSweep } from "../core/sweep/sweep.ts";
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
  let lastLine = Number.NEGATIVE_INFINITY; // the first line at once: the log shows the sweep started
  return (p) => {
    const eta = p.etaS === null ? "" : `, ETA ${p.etaS.toFixed(0)}s`;
    // a search's probes are found as it goes: their count is a most, not a total
    const which =
      p.maxProbes !== null
        ? `probe ${p.levelIndex + 1} (at most ${p.maxProbes}) at ${Number(p.level.toPrecision(4))} ${p.unit}`
        : `level ${p.level} [${p.levelIndex + 1}/${p.levelCount}]`;
    const done =
      p.total !== null
        ? `${p.done}/${p.total} requests`
        : `${p.done} requests${p.durationS !== null ? ` of a ${p.durationS} s level` : ""}`;
    const line = `${which} ${done}, ${p.elapsedS.toFixed(1)}s elapsed${eta}`;
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else if (performance.now() - lastLine > 10_000 || (p.total !== null && p.done === p.total)) {
      lastLine = performance.now();
      process.stderr.write(`${line}\n`);
    }
  };
}

/** 0 when every level's error rate is within the limit, else 1 with the levels named on stderr. */
export function exitStatus(doc: ResultDocument, maxErrorRatePct: number): number {
  // With --repeats every repeat's levels count: a median would hide one repeat that failed.
  const runs = doc.repeats && doc.repeats.length > 1 ? doc.repeats : [{ index: 0, levels: doc.levels }];
  const over = runs.flatMap((r) =>
    r.levels
      .filter((l) => l.requests > 0 && (100 * l.errors) / l.requests > maxErrorRatePct)
      .map((l) => ({ ...l, repeat: runs.length > 1 ? r.index : null })),
  );
  if (over.length > 0) {
    const which = over
      .map(
        (l) =>
          `level ${l.level}${l.repeat !== null ? ` (repeat ${l.repeat + 1})` : ""}: ${l.errors} of ${l.requests} failed`,
      )
      .join("; ");
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

/** The sweep's settings and its configuration from argv (null: `--help` was printed). */
export function sweepSettingsOf(argv: string[]) {
  const parsed = parseCommand(argv, TABLE, INTRO, GROUPS);
  if (parsed === null) return null;
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  return { values: parsed.values, config: sweepConfigOf(parsed.values, parsed.values) };
}

/**
 * SIGINT/SIGTERM. Before any load is sent (readiness, calibration) there is nothing to keep: exit
 * 130 at once. During the sweep the first signal aborts `stop` (every wait ends, nothing more is
 * sent, the level in progress is abandoned, finished levels are saved); a second exits at once.
 */
function watchSignals() {
  const stop = new AbortController();
  let sweeping = false;
  const onSig = () => {
    if (!sweeping || stop.signal.aborted) {
      process.stderr.write("\ninterrupted: nothing more is sent\n");
      process.exit(130);
    }
    stop.abort();
    process.stderr.write(
      "\ninterrupted: finishing the level in progress is abandoned; finished levels are saved\n",
    );
  };
  process.on("SIGINT", onSig);
  process.on("SIGTERM", onSig);
  return {
    stop: stop.signal,
    sweeping: () => {
      sweeping = true;
    },
    release: () => {
      process.off("SIGINT", onSig);
      process.off("SIGTERM", onSig);
    },
  };
}

export async function sweepCommand(argv: string[]): Promise<number> {
  const settings = sweepSettingsOf(argv);
  if (settings === null) return 0;
  const { values: v, config } = settings;
  const notice = noticePrinter(v.quiet);
  assertWritable(v.out);
  // A checkpoint that cannot be resumed is found before any load is sent.
  if (v.resume && existsSync(v.out)) readResults(v.out);
  const signals = watchSignals();
  // --server-command: its output beside the results, the server stopped when the sweep ends
  const serverLog = `${v.out.replace(/\.json$/i, "")}.server.log`;
  const setup = await prepareSweep(v, config, {
    onNotice: notice,
    serverLog,
    onServerStarted: (pid) => notice(`started the server (pid ${pid}); its output: ${serverLog}`),
  });
  signals.sweeping();
  const progress = progressPrinter(v.quiet);
  let doc: ResultDocument;
  try {
    doc = await runSweep({
      ...setup,
      out: v.out,
      records: v.records,
      resume: v.resume,
      onNotice: notice,
      ...(progress ? { onProgress: progress } : {}),
      onLevel: () => {
        if (process.stderr.isTTY && !v.quiet) process.stderr.write("\r\x1b[K");
      },
      stop: signals.stop,
    });
  } finally {
    if (setup.server) await stopServer(setup.server.pid);
  }
  signals.release();
  // (with --mode search, the report's saturation paragraph is the headline line)
  process.stdout.write(`${markdownReport(doc)}\n`);
  const p = outputPaths(v.out);
  if (!v.quiet)
    process.stderr.write(
      `wrote ${p.json}, ${p.csv}, ${p.md}${v.records === "file" ? `, ${p.requestsFile}` : ""}\n`,
    );
  if (v.plots) await writePlotsBeside(doc, v.out);
  if (signals.stop.aborted) return 130;
  return exitStatus(doc, v.maxErrorRate);
}
