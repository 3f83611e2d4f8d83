/** `tokenbench` entry point: dispatch to a subcommand; usage errors exit 2. */

import { TOOL_VERSION } from "../core/results/version.ts";
import { didYouMean } from "../core/settings/argv.ts";
import { TokenbenchError, UsageError } from "../schema/errors.ts";
import {
  compareCommand,
  exportCommand,
  importCommand,
  mergeCommand,
  planCommand,
  reportCommand,
} from "./document-commands.ts";
import { mockCommand } from "./mock-command.ts";
import { profileCommand } from "./profile-command.ts";
import { sweepCommand } from "./sweep-command.ts";
import { uploadCommand } from "./upload-command.ts";

const HELP = `tokenbench ${TOOL_VERSION}: measure OpenAI-compatible LLM inference servers

Usage: tokenbench <command> [flags]   (tokenbench <command> --help for flags)

Commands:
  sweep        closed- or open-loop load sweep: TTFT, ITL, TPOT, E2E, throughput, goodput
  profile      single-stream serving profile: calibration, prefill, decode, prefix cache
  report       re-render the table and SVG/PNG charts from a saved results file
  compare      base.json vs head.json: verdicts and the gate; exit 1 when the gate fails
  plan         runs of the base branch: requests, runs or A/B pairs needed to detect a change of X %
  import       import vllm RESULT.json: a vLLM bench serve result into schema v1
  export       export gab|bencher results.json: github-action-benchmark or Bencher Metric Format JSON
  merge        shard documents of one run (--shard i/n on several runners) into one
  upload       store a results file in the results service (trends, badges, the PR page)
  mockserver   run the OpenAI-compatible mock inference server
`;

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  sweep: sweepCommand,
  mockserver: mockCommand,
  profile: profileCommand,
  report: reportCommand,
  compare: compareCommand,
  plan: planCommand,
  import: importCommand,
  export: exportCommand,
  merge: mergeCommand,
  upload: uploadCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === "--help" || cmd === "-h" || cmd === "help") {
    process.stdout.write(HELP);
    return cmd === undefined ? 2 : 0;
  }
  if (cmd === "--version" || cmd === "-v") {
    process.stdout.write(`${TOOL_VERSION}\n`);
    return 0;
  }
  const run = COMMANDS[cmd];
  if (!run) {
    const guess = didYouMean(cmd, Object.keys(COMMANDS));
    process.stderr.write(
      `tokenbench: unknown command "${cmd}"${guess ? ` (did you mean "${guess}"?)` : ""}\n\n${HELP}`,
    );
    return 2;
  }
  try {
    return await run(rest);
  } catch (err) {
    // The one place errors meet the user: usage errors exit 2, every other known error 1 with
    // its stable code; anything else is a bug and keeps its stack trace.
    if (err instanceof UsageError) {
      process.stderr.write(`tokenbench ${cmd}: ${err.message}\n(see tokenbench ${cmd} --help)\n`);
      return 2;
    }
    if (err instanceof TokenbenchError) {
      process.stderr.write(`tokenbench ${cmd}: error [${err.code}]: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`tokenbench: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
