/**
 * Every setting of tokenbench, declared once: CLI flag, Action input, type, default, check and
 * help. The CLI's options and `--help`, the Action's inputs and the test against action.yml all
 * come from these declarations; no default is written anywhere else. The sweep's own settings
 * are in sweep-table.ts, the Action-only inputs in action-table.ts.
 */
import { DEFAULT_GATE_TEXT, FAIL_ON, type FailOn } from "../../shared/rules.ts";
import { VERDICT_DEFAULTS } from "../../shared/verdict.ts";
import { ACTION } from "./action-table.ts";
import { CONNECTION } from "./connection-table.ts";
import { boolean, custom, nonNeg, nonNegInt, number, numbers, oneOf, positiveInt, text } from "./setting.ts";
import { SWEEP } from "./sweep-table.ts";

export { CONNECTION };

/** The single-stream serving profile (CLI `profile`, Action `profile: true`). */
export const PROFILE = {
  targets: numbers({
    flag: "targets",
    input: "profile-targets",
    default: [512, 1024, 2048, 4096],
    check: (n) => positiveInt(n) && n <= 10_000_000,
    what: "positive integers up to 10000000",
    help: "prompt sizes to calibrate and measure",
  }),
  repetitions: number<number>({
    flag: "repetitions",
    input: "profile-repetitions",
    default: 3,
    check: (n) => positiveInt(n) && n <= 1000,
    what: "a positive integer up to 1000",
    help: "repetitions per measurement",
  }),
  warmupRuns: number<number>({
    flag: "warmup-runs",
    input: null,
    default: 1,
    check: (n) => nonNegInt(n) && n <= 1000,
    what: "a non-negative integer up to 1000",
    help: "excluded warmup requests",
  }),
  decodeTokens: number<number>({
    flag: "decode-tokens",
    input: null,
    default: 256,
    check: (n) => Number.isInteger(n) && n >= 2 && n <= 1_000_000,
    what: "an integer from 2 to 1000000",
    help: "tokens per steady-decode run",
  }),
  suffixTokens: number<number>({
    flag: "suffix-tokens",
    input: null,
    default: 32,
    check: positiveInt,
    what: "a positive integer",
    help: "size of the small_suffix case",
  }),
  prefixTarget: number<number | null>({
    flag: "prefix-target",
    input: null,
    default: null,
    check: positiveInt,
    what: "a positive integer",
    help: "prompt size for the prefix-cache cases (default: the largest target)",
  }),
  thinking: oneOf({
    flag: "thinking",
    input: null,
    choices: ["kwargs", "thinking", "both", "none"] as const,
    default: "kwargs",
    help: "how to disable thinking (kwargs: chat_template_kwargs.enable_thinking=false; thinking: {type: disabled})",
  }),
};

/** Who generates the load: threads on this runner, and this runner's shard of a matrix. */
export const LOAD = {
  workers: custom<number | "auto">(
    {
      flag: "workers",
      metavar: "N|auto",
      default: "auto",
      help: "worker threads that generate the load, each with its own connections and event loop (auto: the cores, less half of them when the server runs on this machine; 1: the main thread alone)",
    },
    (v) => {
      if (v === "auto") return "auto";
      const n = Number(v);
      return Number.isInteger(n) && n >= 1 && n <= 64
        ? n
        : { problem: `must be auto or a whole number from 1 to 64, got "${v}"` };
    },
  ),
  shard: custom<string | null>(
    {
      flag: "shard",
      metavar: "i/n",
      default: null,
      help: "run shard i of n of every level (a matrix of runners; merge them with `tokenbench merge`); needs --start-at",
    },
    (v) => (/^\d+\/\d+$/.test(v) ? v : { problem: `must be i/n, e.g. 1/4, got "${v}"` }),
  ),
  startAt: number<number | null>({
    flag: "start-at",
    metavar: "EPOCH_MS",
    default: null,
    check: (n) => Number.isInteger(n) && n > 1_500_000_000_000,
    what: "a Unix time in milliseconds",
    help: "with --shard: when the first level starts on every runner (the same value for all)",
  }),
  levelSlotS: number<number | null>({
    flag: "level-slot-s",
    metavar: "S",
    default: null,
    check: (n) => n > 0 && n <= 86_400,
    what: "a positive number of seconds",
    help: "with --shard: level i starts at --start-at + i x this (default: --duration + 15 s)",
  }),
};

/** How a compare judges and gates (`tokenbench compare`, the Action; the service takes the same as query parameters). */
export const GATING = {
  thresholds: text<string | null>({
    flag: "thresholds",
    metavar: "RULES",
    default: null,
    help: 'how each measure is judged, e.g. "ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test": rules are +N%/-N%/N% (a gated measure: the smallest change that counts), t-test or off; a measure given its own rule joins the gate (default *=t-test)',
  }),
  gate: text<string | null>({
    flag: "gate",
    metavar: "MEASURES",
    default: null,
    defaultText: DEFAULT_GATE_TEXT,
    help: "the rows that decide a pull request, one-sided with the false-fail rate per pull request held at --gate-fwer: measures (every level), measure@level, or off; every other row is informational",
  }),
  gateFwer: number<number>({
    flag: "gate-fwer",
    metavar: "PCT",
    default: VERDICT_DEFAULTS.fwerPct,
    check: (n) => n > 0 && n < 50,
    what: "a percentage above 0 and under 50",
    help: "the gate's false-fail rate per pull request, % (held across its rows)",
  }),
  failOn: custom<FailOn | null>(
    {
      flag: "fail-on",
      metavar: "regression|unjudged|warning|never",
      default: null,
      defaultText: null,
      help: "fail on: regression (the gate failed), unjudged (also a gate that could not judge), warning (also any other row that regressed), never (default regression in the CLI, the Action and the service; the Action's fail-on-regression means warning)",
    },
    (v) =>
      FAIL_ON.includes(v as FailOn)
        ? (v as FailOn)
        : { problem: `must be one of ${FAIL_ON.join(", ")}, got "${v}"` },
  ),
};

/** CLI output and display (no Action input: the Action writes its own files). */
export const CLI_OUTPUT = {
  records: oneOf({
    flag: "records",
    input: null,
    choices: ["inline", "file", "none"] as const,
    default: "inline",
    help: "per-request records in the JSON, a sibling .requests.jsonl, or not at all",
  }),
  resume: boolean({
    flag: "resume",
    input: null,
    switch: true,
    default: false,
    help: "finish a killed sweep in --out without redoing finished levels",
  }),
  plots: boolean({
    flag: "plots",
    input: null,
    switch: true,
    default: false,
    help: "SVG and PNG charts beside --out",
  }),
  quiet: boolean({
    flag: "quiet",
    input: null,
    switch: true,
    default: false,
    help: "print only errors on stderr (no progress, no notices)",
  }),
};

export const SWEEP_OUT = text<string>({
  flag: "out",
  input: null,
  metavar: "FILE.json",
  default: "results/sweep.json",
  help: "results document; .csv and .md beside it",
});
export const PROFILE_OUT = text<string>({
  flag: "out",
  input: null,
  metavar: "FILE.json",
  default: "results/profile.json",
  help: "results document",
});

/** `tokenbench report | compare | import | export`. */
export const TOOLS = {
  allowDifferentWorkloads: boolean({
    flag: "allow-different-workloads",
    input: null,
    switch: true,
    default: false,
    help: "compare: compare runs of different workloads anyway (the differing fields are still named)",
  }),
  clockToleranceMs: number<number>({
    flag: "clock-tolerance-ms",
    input: null,
    default: 50,
    check: (n) => n >= 0 && n <= 60_000,
    what: "a number of milliseconds from 0 to 60000",
    help: "merge: how far apart the shards' level starts may be (clock skew plus scheduling)",
  }),
  outDir: text<string | null>({
    flag: "out-dir",
    input: null,
    metavar: "DIR",
    default: null,
    help: "output folder",
  }),
  png: boolean({ flag: "png", input: null, switch: true, default: true, help: "also render PNG charts" }),
  baseline: text<string | null>({
    flag: "baseline",
    input: null,
    metavar: "FILE.json",
    default: null,
    help: "draw this document beside the results",
  }),
  format: oneOf({
    flag: "format",
    input: null,
    choices: ["md", "json"] as const,
    default: "md",
    help: "output format",
  }),
  out: text<string | null>({
    flag: "out",
    input: null,
    metavar: "FILE",
    default: null,
    help: "write to FILE",
  }),
  thresholdPct: number<number>({
    flag: "threshold-pct",
    input: null,
    default: VERDICT_DEFAULTS.fallbackPct,
    check: nonNeg,
    what: "a non-negative number",
    help: "|delta %| above which a measure changed where nothing measures its noise (the percent method)",
  }),
  confidence: number<number>({
    flag: "confidence",
    input: null,
    default: VERDICT_DEFAULTS.confidence,
    check: (n) => n > 0.5 && n < 1,
    what: "in (0.5, 1)",
    help: "confidence of the intervals",
  }),
  minEffectPct: number<number>({
    flag: "min-effect-pct",
    input: null,
    default: 1,
    check: nonNeg,
    what: "a non-negative number",
    help: "smallest change, in % of the base, that a statistical method counts",
  }),
  detectPct: number<number>({
    flag: "detect-pct",
    input: null,
    metavar: "PCT",
    default: 10,
    check: (n) => n > 0 && n < 100,
    what: "a percentage above 0 and under 100",
    help: "plan: the change to detect, % of the base",
  }),
  iterations: number<number>({
    flag: "iterations",
    input: null,
    default: 1000,
    check: (n) => Number.isInteger(n) && n >= 100,
    what: "an integer >= 100",
    help: "bootstrap iterations",
  }),
};

/** Every table, for the test that holds action.yml to them. */
export const ALL_SETTINGS = {
  ...CONNECTION,
  ...SWEEP,
  ...LOAD,
  ...PROFILE,
  ...CLI_OUTPUT,
  ...GATING,
  ...ACTION,
};
