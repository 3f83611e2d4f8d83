/**
 * Every setting of tokenbench, declared once: CLI flag, Action input, type, default, check and
 * help. The CLI's options and `--help`, the Action's inputs and the test against action.yml all
 * come from here; no default is written anywhere else.
 */
import { UsageError } from "../../schema/errors.ts";
import type { ProfileConfig, SweepConfig } from "../../schema/v1.ts";
import { FAIL_ON, type FailOn } from "../../shared/rules.ts";
import { DEFAULT_THRESHOLDS } from "../../shared/statistics.ts";
import {
  anyInt,
  boolean,
  custom,
  headers,
  httpUrl,
  jsonObject,
  keyValues,
  nonNeg,
  nonNegInt,
  number,
  numbers,
  oneOf,
  positive,
  positiveInt,
  text,
  type Values,
} from "./setting.ts";

/** How to reach the server under test (sweep, profile, the Action). */
export const CONNECTION = {
  baseUrl: httpUrl<string>({
    flag: "base-url",
    default: "http://127.0.0.1:8000",
    help: "server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted)",
  }),
  model: text<string | null>({
    flag: "model",
    metavar: "ID",
    default: null,
    help: "model name (default: the first entry of /v1/models)",
  }),
  api: oneOf({
    flag: "api",
    choices: ["chat", "completions"] as const,
    default: "chat",
    help: "API to call",
  }),
  apiKey: text<string | null>({
    flag: "api-key",
    input: "server-api-key",
    metavar: "KEY",
    default: null,
    env: ["TOKENBENCH_API_KEY", "OPENAI_API_KEY"],
    help: "bearer key for the server under test, if it needs one",
  }),
  headers: headers({ flag: "header", input: "headers", default: {}, help: "extra request header" }),
  timeoutS: number<number>({
    flag: "timeout-s",
    metavar: "S",
    default: 300,
    check: positive,
    what: "a positive number of seconds",
    help: "per-request timeout in seconds",
  }),
  extraBody: jsonObject({
    flag: "extra-body",
    default: {},
    help: 'JSON object merged into every request body, e.g. {"chat_template_kwargs":{"enable_thinking":false}}',
  }),
  readyTimeoutS: number<number>({
    flag: "ready-timeout-s",
    metavar: "S",
    default: 600,
    check: positive,
    what: "a positive number of seconds",
    help: "seconds to wait for the server to become ready",
  }),
  serverLimits: keyValues({
    flag: "server-limit",
    default: {},
    help: "a limit the server does not expose, e.g. max_running_requests=8",
  }),
};

/** What a sweep sends and how (the CLI's sweep and the Action). */
export const SWEEP = {
  mode: oneOf({
    flag: "mode",
    choices: ["closed", "open", "search"] as const,
    default: "closed",
    help: "closed: levels are concurrent users; open: levels are arrivals per second; search: find the highest rate that meets the SLOs (open-loop probes from the first of --levels)",
  }),
  levels: numbers({
    flag: "levels",
    default: [],
    defaultText: null,
    check: positive,
    what: "positive numbers",
    help: "comma-separated levels (default 1,2,4,8 users in closed loop, 1,2,4 req/s in open loop)",
  }),
  searchSloPassPct: number<number>({
    flag: "search-slo-pass-pct",
    default: 90,
    check: (n) => n > 0 && n <= 100,
    what: "a percentage in (0, 100]",
    help: "--mode search: the share of requests that must meet every SLO",
  }),
  searchMaxProbes: number<number>({
    flag: "search-max-probes",
    default: 8,
    check: (n) => Number.isInteger(n) && n >= 2 && n <= 100,
    what: "an integer from 2 to 100",
    help: "--mode search: at most this many probes (each an open-loop level of --duration or --requests)",
  }),
  sharedPrefixTokens: number<number | null>({
    flag: "shared-prefix-tokens",
    metavar: "N",
    default: null,
    check: (n) => Number.isInteger(n) && n > 0 && n <= 1_000_000,
    what: "a positive integer",
    help: "every prompt begins with its group's N-token prefix (a system prompt) before its unique part: exercises the server's prefix cache",
  }),
  prefixGroups: number<number>({
    flag: "prefix-groups",
    metavar: "G",
    default: 1,
    check: (n) => Number.isInteger(n) && n >= 1 && n <= 100_000,
    what: "a positive integer",
    help: "with --shared-prefix-tokens: request i belongs to group i mod G, each group with its own prefix",
  }),
  rampUpS: number<number | null>({
    flag: "ramp-up-s",
    metavar: "S",
    default: null,
    check: (n) => n > 0 && n <= 3600,
    what: "a positive number of seconds up to 3600",
    help: "before each level's measurement, bring users in one by one (closed loop) or raise the rate linearly from 0 (open loop) over S seconds; those requests are excluded and counted",
  }),
  dataset: text<string | null>({
    flag: "dataset",
    metavar: "FILE",
    default: null,
    help: "prompts from a file instead of synthetic ones: JSON Lines with prompt or messages (and optionally output_tokens) per line, or ShareGPT JSON; used in a seeded shuffle",
  }),
  turns: number<number>({
    flag: "turns",
    metavar: "T",
    default: 1,
    check: (n) => Number.isInteger(n) && n >= 1 && n <= 1000,
    what: "an integer from 1 to 1000",
    help: "closed loop: each user holds conversations of T turns, re-sending the history (earlier prompts and the server's answers) with each new user turn; TTFT is reported per turn",
  }),
  thinkTimeMs: number<number>({
    flag: "think-time-ms",
    metavar: "MS",
    default: 0,
    check: (n) => n >= 0 && n <= 3_600_000,
    what: "a number of milliseconds from 0 to 3600000",
    help: "with --turns: a user waits this long after an answer before sending the next turn",
  }),
  trace: text<string | null>({
    flag: "trace",
    metavar: "FILE",
    default: null,
    help: "replay a trace (Mooncake JSONL: timestamp ms, input_length, output_length, optional hash_ids of shared 512-token blocks): one open-loop level at the trace's own times",
  }),
  traceSpeed: number<number>({
    flag: "trace-speed",
    metavar: "X",
    default: 1,
    check: (n) => n > 0 && n <= 1000,
    what: "a positive number up to 1000",
    help: "with --trace: play the trace X times as fast (2: gaps halved)",
  }),
  requests: number<number | null>({
    flag: "requests",
    default: null,
    check: positiveInt,
    what: "a positive integer",
    help: "measured requests per level (default 32 unless --duration is set; closed loop raises it to 2x the users)",
  }),
  duration: number<number | null>({
    flag: "duration",
    metavar: "S",
    default: null,
    check: positive,
    what: "a positive number of seconds",
    help: "seconds per level instead of a request count",
  }),
  warmup: number<number>({
    flag: "warmup",
    default: 2,
    check: nonNegInt,
    what: "a non-negative integer",
    help: "warmup requests before each level (excluded from the figures)",
  }),
  arrival: oneOf({
    flag: "arrival",
    choices: ["poisson", "constant", "gamma"] as const,
    default: "poisson",
    help: "open-loop arrivals",
  }),
  burstiness: number<number>({
    flag: "burstiness",
    metavar: "K",
    default: 1,
    check: positive,
    what: "a positive number",
    help: "gamma shape for open-loop arrivals (1 = Poisson; < 1 burstier)",
  }),
  maxInFlight: number<number | null>({
    flag: "max-in-flight",
    default: null,
    check: positiveInt,
    what: "a positive integer",
    help: "open loop: cap on concurrent requests (the wait counts as queueing)",
  }),
  seed: number<number>({
    flag: "seed",
    default: 1,
    check: anyInt,
    what: "an integer",
    help: "seed for prompts and arrivals",
  }),
  promptTokens: number<number>({
    flag: "prompt-tokens",
    default: 256,
    check: positiveInt,
    what: "a positive integer",
    help: "synthetic prompt length in tokens",
  }),
  maxTokens: number<number>({
    flag: "max-tokens",
    default: 128,
    check: positiveInt,
    what: "a positive integer",
    help: "output tokens per request",
  }),
  prompts: oneOf({
    flag: "prompts",
    choices: ["fixed", "sample"] as const,
    default: "fixed",
    help: "fixed lengths, or the bundled length distribution",
  }),
  ignoreEos: boolean({
    flag: "ignore-eos",
    switch: true,
    default: true,
    help: "ask for exactly --max-tokens tokens",
  }),
  sloTtftMs: number<number | null>({
    flag: "slo-ttft-ms",
    metavar: "MS",
    default: null,
    check: positive,
    what: "a positive number of ms",
    help: "SLO on time to first token (goodput)",
  }),
  sloTpotMs: number<number | null>({
    flag: "slo-tpot-ms",
    metavar: "MS",
    default: null,
    check: positive,
    what: "a positive number of ms",
    help: "SLO on time per output token (goodput)",
  }),
  sloE2eMs: number<number | null>({
    flag: "slo-e2e-ms",
    metavar: "MS",
    default: null,
    check: positive,
    what: "a positive number of ms",
    help: "SLO on end-to-end latency (goodput)",
  }),
  calibratePrompts: boolean({
    flag: "calibrate-prompts",
    switch: true,
    default: true,
    help: "size prompts so the server counts --prompt-tokens tokens, chat template included (a few 1-token requests first)",
  }),
  maxErrorRate: number<number>({
    flag: "max-error-rate",
    metavar: "PCT",
    default: 5,
    check: (n) => n >= 0 && n <= 100,
    what: "a percentage in [0, 100]",
    help: "exit 1 (the Action: fail) when a level's failed requests exceed this share",
  }),
  metricsIntervalMs: number<number>({
    flag: "metrics-interval-ms",
    metavar: "MS",
    default: 500,
    check: nonNegInt,
    what: "a non-negative integer",
    help: "sample the server's /metrics this often during each level (0 = off)",
  }),
};

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
    help: 'how each measure is judged, e.g. "ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test": a measure\'s own rule gates (regression), the * rule warns (warning); rules are +N%/-N%/N%, t-test or off (default *=t-test)',
  }),
  failOn: custom<FailOn | null>(
    {
      flag: "fail-on",
      metavar: "regression|warning|never",
      default: null,
      defaultText: null,
      help: "fail on: regression (a measure with its own rule regressed), warning (any regression), never (CLI default: warning; Action default: never, or warning with fail-on-regression)",
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

/** The Action's own inputs (no CLI flag). */
export const ACTION = {
  publishResults: text<string | null>({
    flag: null,
    input: "publish-results",
    default: null,
    help: "Publish-only mode: comma-separated results JSON files written by an earlier job (the fork-safe workflow_run pattern); nothing is measured",
  }),
  mergeResults: text<string | null>({
    flag: null,
    input: "merge-results",
    default: null,
    help: "Merge mode: comma-separated results JSON files of one run's shards (the matrix's `shard` jobs); they are merged into one document, which is uploaded, compared and commented like a measured one; nothing is measured",
  }),
  mergeClockToleranceMs: number<number>({
    flag: null,
    input: "clock-tolerance-ms",
    default: 50,
    check: (n) => n >= 0 && n <= 60_000,
    what: "a number of milliseconds from 0 to 60000",
    help: "Merge mode: how far apart the shards' level starts may be (the runners' clock skew plus their scheduling)",
  }),
  serverCommand: text<string | null>({
    flag: null,
    input: "server-command",
    default: null,
    help: "Command that starts the inference server in the background (stopped in the post step; its log is attached to the artifact)",
  }),
  profile: boolean({
    flag: null,
    input: "profile",
    default: false,
    help: "Also run the single-stream serving profile",
  }),
  testbed: text<string | null>({
    flag: null,
    input: "testbed",
    default: null,
    help: "A name for this testbed (hardware + server + model + workload); results are compared only within one",
  }),
  resultsUrl: httpUrl<string | null>({
    flag: null,
    input: "results-url",
    default: null,
    help: "URL of the tokenbench results service; empty = no upload, no comparison",
  }),
  audience: text<string>({
    flag: null,
    input: "audience",
    default: "tokenbench",
    help: "Audience of the GitHub OIDC token sent to the results service",
  }),
  apiToken: text<string | null>({
    flag: null,
    input: "api-token",
    default: null,
    help: "Repository API token for the results service (used when no OIDC token is available)",
  }),
  baseline: text<string | null>({
    flag: null,
    input: "baseline",
    default: null,
    help: "Compare without a results service: a results file in the repository, or `artifact` (the results artifact of the newest successful run of this workflow on the base branch; needs actions: read)",
  }),
  readToken: text<string | null>({
    flag: null,
    input: "read-token",
    default: null,
    help: "The results service's READ_TOKEN, when it has one: needed to compare against the base branch (and so for fail-on-regression)",
  }),
  dashboardUrl: httpUrl<string | null>({
    flag: null,
    input: "dashboard-url",
    default: null,
    help: "Dashboard base URL for links (default results-url)",
  }),
  githubToken: text<string | null>({
    flag: null,
    input: "github-token",
    default: null,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub expression, as action.yml writes it
    defaultText: "${{ github.token }}",
    help: "Token used to comment on the pull request",
  }),
  comment: boolean({
    flag: null,
    input: "comment",
    default: true,
    help: "Post (and update) a sticky PR comment",
  }),
  failOnRegression: boolean({
    flag: null,
    input: "fail-on-regression",
    default: false,
    help: "Fail the step when compare reports a regression",
  }),
  failOnUploadError: boolean({
    flag: null,
    input: "fail-on-upload-error",
    default: false,
    help: "Fail the step when the upload to results-url fails (otherwise a warning; results stay in the artifact)",
  }),
  artifactName: text<string>({
    flag: null,
    input: "artifact-name",
    default: "tokenbench-results",
    help: "Name of the artifact holding the raw results",
  }),
  resultsDir: text<string>({
    flag: null,
    input: "results-dir",
    default: "tokenbench-results",
    help: "Where results are written in the workspace",
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

export const DEFAULT_CLOSED_LEVELS = [1, 2, 4, 8];
export const DEFAULT_OPEN_LEVELS = [1, 2, 4];
export const DEFAULT_REQUESTS = 32;

type ConnectionValues = Values<typeof CONNECTION>;

/**
 * What one load generator can honestly do, and what keeps a run finite: beyond these a run only
 * piles up memory (10^9 users ran to 1.5 GB and ignored SIGTERM). A usage error, never a clamp.
 */
export const SWEEP_BOUNDS = {
  closedUsers: 10_000,
  openRateRps: 10_000,
  requestsPerLevel: 1_000_000,
  durationS: 86_400,
  warmupRequests: 100_000,
  levels: 100,
};

/** A setting whose value passed a bound: the CLI names its flag, the Action its input. */
export class BoundError extends UsageError {
  constructor(
    readonly key: keyof typeof SWEEP,
    readonly problem: string,
  ) {
    super(`--${SWEEP[key].flag} ${problem}`, null);
  }
}

function checkBounds(v: Values<typeof SWEEP>, levels: number[]): void {
  const b = SWEEP_BOUNDS;
  if (v.thinkTimeMs !== 0 && v.turns === 1)
    throw new BoundError("thinkTimeMs", "goes with --turns T (the pause between a conversation's turns)");
  if (v.turns > 1 && v.mode !== "closed")
    throw new BoundError("turns", "needs --mode closed: each user holds one conversation at a time");
  if (v.traceSpeed !== 1 && v.trace === null) throw new BoundError("traceSpeed", "goes with --trace FILE");
  if (v.trace !== null) {
    if (v.mode === "search")
      throw new BoundError("trace", "replays the trace's own times; it cannot be searched");
    if (v.levels.length > 0)
      throw new BoundError(
        "trace",
        "sets the rate from the trace's own times: drop --levels (--trace-speed scales it)",
      );
    if (v.dataset !== null || v.turns > 1 || v.sharedPrefixTokens !== null)
      throw new BoundError(
        "trace",
        "brings its own prompts (lengths and shared blocks): it does not combine with --dataset, --turns or --shared-prefix-tokens",
      );
  }
  if (v.prefixGroups !== 1 && v.sharedPrefixTokens === null)
    throw new BoundError("prefixGroups", "goes with --shared-prefix-tokens N (the prefix each group shares)");
  if (levels.length > b.levels)
    throw new BoundError("levels", `takes at most ${b.levels} levels, got ${levels.length}`);
  if (v.mode === "closed") {
    const bad = levels.find((l) => !Number.isInteger(l) || l > b.closedUsers);
    if (bad !== undefined)
      throw new BoundError(
        "levels",
        `in closed loop are users: whole numbers up to ${b.closedUsers}, got ${bad} (for more load, run shards on several machines)`,
      );
  } else {
    const bad = levels.find((l) => l > b.openRateRps);
    if (bad !== undefined)
      throw new BoundError(
        "levels",
        `in open loop are request rates up to ${b.openRateRps} req/s, got ${bad}`,
      );
  }
  if (v.requests !== null && v.requests > b.requestsPerLevel)
    throw new BoundError("requests", `is at most ${b.requestsPerLevel} per level, got ${v.requests}`);
  if (v.duration !== null && v.duration > b.durationS)
    throw new BoundError("duration", `is at most ${b.durationS} s per level, got ${v.duration}`);
  if (v.warmup > b.warmupRequests)
    throw new BoundError("warmup", `is at most ${b.warmupRequests} requests, got ${v.warmup}`);
}

/** The sweep's recorded configuration from settings values (mode-dependent defaults resolved). */
export function sweepConfigOf(
  v: Values<typeof SWEEP>,
  c: Pick<ConnectionValues, "timeoutS" | "extraBody" | "headers">,
): SweepConfig {
  const levels =
    v.levels.length > 0
      ? v.levels
      : v.mode === "closed"
        ? DEFAULT_CLOSED_LEVELS
        : v.mode === "search"
          ? [1]
          : DEFAULT_OPEN_LEVELS;
  checkBounds(v, levels);
  if (v.mode === "search") {
    if (v.sloTtftMs === null && v.sloTpotMs === null && v.sloE2eMs === null)
      throw new BoundError(
        "mode",
        "search needs an SLO to search under: --slo-ttft-ms, --slo-tpot-ms or --slo-e2e-ms",
      );
    if (v.levels.length > 1)
      throw new BoundError("levels", "with --mode search is one starting rate (the search picks the others)");
  }
  return {
    // a trace is replayed open loop, at its own times (the level: its mean rate, set when it is read)
    mode: v.mode === "search" || v.trace !== null ? "open" : v.mode,
    ...(v.mode === "search"
      ? { search: { target_pass_pct: v.searchSloPassPct, max_probes: v.searchMaxProbes } }
      : {}),
    levels,
    requests_per_level: v.requests ?? (v.duration === null ? DEFAULT_REQUESTS : null),
    duration_s: v.duration,
    warmup_requests: v.warmup,
    prompt_tokens: v.promptTokens,
    max_tokens: v.maxTokens,
    prompts: v.prompts,
    ignore_eos: v.ignoreEos,
    seed: v.seed,
    arrival: v.arrival,
    burstiness: v.burstiness,
    max_in_flight: v.maxInFlight,
    timeout_s: c.timeoutS,
    slo: { ttft_ms: v.sloTtftMs, tpot_ms: v.sloTpotMs, e2e_ms: v.sloE2eMs },
    extra_body: c.extraBody,
    metrics_interval_ms: v.metricsIntervalMs === 0 ? null : v.metricsIntervalMs,
    header_names: Object.keys(c.headers),
    ...(v.rampUpS !== null ? { ramp_up_s: v.rampUpS } : {}),
    ...(v.sharedPrefixTokens !== null
      ? { shared_prefix: { tokens: v.sharedPrefixTokens, groups: v.prefixGroups } }
      : {}),
    ...(v.turns > 1 ? { sessions: { turns: v.turns, think_time_ms: v.thinkTimeMs } } : {}),
  };
}

export function profileConfigOf(
  v: Values<typeof PROFILE>,
  c: Pick<ConnectionValues, "readyTimeoutS" | "extraBody" | "headers">,
): ProfileConfig {
  return {
    targets: v.targets,
    repetitions: v.repetitions,
    warmup_runs: v.warmupRuns,
    decode_tokens: v.decodeTokens,
    suffix_tokens: v.suffixTokens,
    prefix_target: v.prefixTarget ?? Math.max(...v.targets),
    thinking: v.thinking,
    ready_timeout_s: c.readyTimeoutS,
    extra_body: c.extraBody,
    header_names: Object.keys(c.headers),
  };
}

/** Defaults of a table (no source), for tests, scripts and embedding. */
export function defaultsOf<T extends Record<string, { default: unknown }>>(
  t: T,
): { [K in keyof T]: T[K]["default"] } {
  return Object.fromEntries(Object.entries(t).map(([k, s]) => [k, s.default])) as {
    [K in keyof T]: T[K]["default"];
  };
}

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
    default: DEFAULT_THRESHOLDS.pct,
    check: nonNeg,
    what: "a non-negative number",
    help: "|delta %| above which a measure without samples changed",
  }),
  confidence: number<number>({
    flag: "confidence",
    input: null,
    default: DEFAULT_THRESHOLDS.confidence,
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
    help: "smallest percentile difference that counts (bootstrap)",
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
