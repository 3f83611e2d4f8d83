/**
 * The one error base. Every error tokenbench raises on purpose carries a stable `code` from
 * RUN_ERRORS (part of the contract, like the per-request error codes of schema v1: never rename
 * one) and a message that names the cause, what to check and the next step. Entry points catch
 * `TokenbenchError` in one place; anything else is a bug and keeps its stack trace. The error
 * table in docs/cli.md is generated from RUN_ERRORS (`npm run docs`).
 */

/** Every run-level error: its exit status from the CLI and what it means, for the docs' table. */
export const RUN_ERRORS = {
  usage: {
    exit: 2,
    meaning: "a flag, an Action input or a combination of them is wrong; the message names it",
  },
  not_ready: {
    exit: 1,
    meaning:
      "the server did not become ready within `--ready-timeout-s`, or cannot be reached at all (refused, unknown host, TLS)",
  },
  server_exited: { exit: 1, meaning: "the Action's `server-command` exited before the server was ready" },
  model_unknown: { exit: 1, meaning: "no `--model` was given and the server's `/v1/models` names none" },
  model_not_served: {
    exit: 1,
    meaning: "the server does not serve `--model` and refuses it; the message lists what it serves",
  },
  api_unsupported: {
    exit: 1,
    meaning:
      "the server does not serve the API asked for (`--api responses` answered 404/405, or with no stream): the message says which to use",
  },
  calibration_failed: {
    exit: 1,
    meaning: "the server offers no way to count prompt tokens (`count_tokens`, `/tokenize`, usage probes)",
  },
  prompt_too_long: {
    exit: 1,
    meaning: "the longest prompt plus its output tokens does not fit the server's context",
  },
  out_unwritable: {
    exit: 1,
    meaning: "`--out` (the Action's `results-dir`) cannot be written; nothing was sent",
  },
  results_file_invalid: {
    exit: 1,
    meaning: "a results file cannot be read or is not a valid schema-v1 document",
  },
  schema_invalid: {
    exit: 1,
    meaning: "a document does not match schema v1; the message names each field at fault",
  },
  results_unwritable_schema: {
    exit: 1,
    meaning:
      "what a run measured does not fit schema v1 (a stream tokenbench could not make sense of, or a bug): it is all written to `<out>.invalid.json` beside the results, and the message names the fields; please report it",
  },
  results_unwritten: {
    exit: 1,
    meaning:
      "the results could not be written where asked (a full disk, a quota, a file-size limit, an I/O error): no partial file is left, and the whole document is tried once in the system's temporary folder; the message says what was kept",
  },
  resume_mismatch: { exit: 1, meaning: "`--resume` found a document written with a different configuration" },
  path_outside: {
    exit: 1,
    meaning:
      "a path read from a document (a shard's `requests_file`) or an Action input leads outside the folder it must stay in, a symbolic link included",
  },
  dataset_invalid: { exit: 1, meaning: "`--dataset` cannot be read or a line of it is not a request" },
  trace_invalid: { exit: 1, meaning: "`--trace` cannot be read or a line of it is not a trace row" },
  agent_sessions_invalid: {
    exit: 1,
    meaning: "`--agent-sessions` cannot be read or a session in it is not one (docs/agent-sessions.md)",
  },
  tools_invalid: {
    exit: 1,
    meaning:
      "`--tools` cannot be read or is not an array of OpenAI tool definitions (the message names the tool and field)",
  },
  import_invalid: {
    exit: 1,
    meaning:
      "`tokenbench import` was given a file that is not what it says, or a field whose value cannot be true (the message names the file and field)",
  },
  export_empty: {
    exit: 1,
    meaning: "`tokenbench export` was given a document with no finished level or no measured value",
  },
  plots_unavailable: {
    exit: 1,
    meaning:
      "`--plots` or `report` needs the charting libraries (vega, vega-lite, @resvg/resvg-js), optional dependencies that are not installed; the results are written anyway",
  },
  merge_refused: {
    exit: 1,
    meaning:
      "the shard documents do not make one run (different configuration, missing shards, skewed starts)",
  },
  workers_unavailable: {
    exit: 1,
    meaning: "`--workers N` needs `dist/shard-thread.js`, which is missing (run `npm run build`)",
  },
  github_api: {
    exit: 1,
    meaning: "the Action: a GitHub API call failed (the PR comment, an artifact look-up)",
  },
  remote_answer_invalid: {
    exit: 1,
    meaning:
      "the Action: GitHub's API or the results service answered something other than its JSON (an HTML error page, a cut body); the message names the service, the status and the first bytes",
  },
  baseline_unavailable: {
    exit: 1,
    meaning: "the Action: the `baseline` input names no file and no artifact could be found",
  },
  cache_reset_unsupported: {
    exit: 1,
    meaning:
      "`--cache-reset`: the server has no prefix-cache reset tokenbench knows (llama.cpp, SGLang, vLLM have one); nothing was sent",
  },
  cache_reset_failed: {
    exit: 1,
    meaning:
      "`--cache-reset`: the server refused its reset (llama.cpp needs `--slot-save-path`, vLLM `VLLM_SERVER_DEV_MODE=1`); the message has its answer",
  },
  upload_failed: {
    exit: 1,
    meaning:
      "`tokenbench upload`: the results service refused the document or could not be reached in 4 tries; the message has its answer (the file is unchanged)",
  },
  gpus_unknown: {
    exit: 1,
    meaning: "`--gpus` names a GPU index that nvidia-smi does not list; the message names the ones it lists",
  },
} as const satisfies Record<string, { exit: number; meaning: string }>;

export type RunErrorCode = keyof typeof RUN_ERRORS;

/** `C`: the vocabulary of codes (the run's, by default; the results service's API has its own). */
export class TokenbenchError<C extends string = RunErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A mistake in how tokenbench was called (flags, inputs): exit code 2, never a stack trace. */
export class UsageError extends TokenbenchError {
  constructor(
    message: string,
    /** The flag or input at fault, when one is. */
    readonly setting: string | null = null,
  ) {
    super("usage", message);
  }
}

export const isTokenbenchError = (e: unknown): e is TokenbenchError => e instanceof TokenbenchError;
