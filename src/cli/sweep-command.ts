/** `tokenbench sweep`: flags → SweepConfig → runSweep → files + Markdown on stdout. */

import type { ApiKind } from "../core/client.ts";
import { discoverModel } from "../core/http.ts";
import { markdownTable, outputPaths } from "../core/report.ts";
import { parseServerLimits } from "../core/server-info.ts";
import { type Progress, runSweep, SweepError } from "../core/sweep.ts";
import { FlagError, sweepConfigFromFlags } from "../core/sweep-flags.ts";
import type { SweepConfig } from "../schema/v1.ts";
import {
  bool,
  headerList,
  httpUrl,
  jsonObject,
  num,
  oneOf,
  parse,
  positive,
  str,
  UsageError,
} from "./args.ts";

export const CONNECTION_FLAGS = {
  "base-url": { type: "string" },
  model: { type: "string" },
  api: { type: "string" },
  "api-key": { type: "string" },
  header: { type: "string", multiple: true },
  "timeout-s": { type: "string" },
  "ignore-eos": { type: "string" },
  "extra-body": { type: "string" },
  quiet: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export const SWEEP_HELP = `tokenbench sweep: latency and throughput across concurrency levels or request rates

Connection:
  --base-url URL         server root (default http://127.0.0.1:8000)
  --model ID             model name (default: first entry of /v1/models)
  --api chat|completions (default chat)
  --api-key KEY          bearer token (default $TOKENBENCH_API_KEY or $OPENAI_API_KEY)
  --header "K: V"        extra request header (repeatable)
  --timeout-s S          per-request timeout (default 300)
  --ignore-eos true|false  ask for exactly --max-tokens tokens (default true)
  --extra-body JSON      merged into every request body, e.g. '{"chat_template_kwargs":{"enable_thinking":false}}'
Load:
  --mode closed|open     closed: N concurrent users; open: arrivals at N req/s (default closed)
  --levels LIST          e.g. 1,2,4,8,16 (users or req/s)
  --requests N           measured requests per level (default 32; closed loop raises it to 2x users)
  --duration S           seconds per level instead of a request count
  --warmup N             warmup requests before each level, excluded (default 0)
  --arrival poisson|constant|gamma  open-loop arrivals (default poisson)
  --burstiness K         gamma shape (1 = Poisson; <1 burstier)
  --max-in-flight N      open loop: cap concurrent requests (waits are counted as queueing)
  --seed N               (default 1)
Workload:
  --prompt-tokens N      synthetic prompt length (default 256)
  --max-tokens N         output tokens (default 128)
  --prompts fixed|sample fixed lengths, or the bundled length distribution
SLOs (goodput):
  --slo-ttft-ms MS  --slo-tpot-ms MS  --slo-e2e-ms MS
Output:
  --out FILE.json        results document (default results/sweep.json); .csv and .md beside it
  --records inline|file|none  per-request records in the JSON, a sibling .requests.jsonl, or not at all
  --resume               finish a killed sweep in --out without redoing finished levels
  --metrics-interval-ms MS  sample the server's /metrics during each level (default 500; 0 = off)
  --server-limit K=V     a limit the server does not expose, e.g. max_running_requests=8 (repeatable)
  --plots                SVG and PNG charts beside --out (also: tokenbench report FILE)
  --quiet                no progress on stderr
`;

export interface ConnectionValues {
  baseUrl: string;
  model: string | null;
  api: ApiKind;
  apiKey: string | null;
  headers: Record<string, string>;
  timeoutS: number;
  ignoreEos: boolean;
  extraBody: Record<string, unknown>;
}

type Values = Parameters<typeof str>[0];

export function connectionValues(v: Values): ConnectionValues {
  return {
    baseUrl: httpUrl(v, "base-url", "http://127.0.0.1:8000"),
    model: str(v, "model", null),
    api: oneOf(v, "api", ["chat", "completions"] as const, "chat"),
    apiKey: str(v, "api-key", null) ?? process.env.TOKENBENCH_API_KEY ?? process.env.OPENAI_API_KEY ?? null,
    headers: headerList(v, "header"),
    timeoutS: num(v, "timeout-s", 300, positive, "a positive number of seconds")!,
    ignoreEos: bool(v, "ignore-eos", true),
    extraBody: jsonObject(v, "extra-body"),
  };
}

export async function resolveModel(c: ConnectionValues): Promise<string> {
  if (c.model !== null) return c.model;
  const headers = { ...c.headers, ...(c.apiKey ? { authorization: `Bearer ${c.apiKey}` } : {}) };
  const m = await discoverModel(c.baseUrl, headers);
  if (m === null) {
    throw new SweepError("model_unknown", `no --model given and ${c.baseUrl}/v1/models did not name one`);
  }
  return m;
}

export function sweepConfigFrom(v: Values): SweepConfig {
  const header = headerList(v, "header");
  try {
    return sweepConfigFromFlags(
      (n) => (typeof v[n] === "string" ? (v[n] as string) : undefined),
      { closedLevels: [1, 2, 4, 8], openLevels: [1, 2, 4], warmup: 0 },
      Object.keys(header),
    );
  } catch (err) {
    if (err instanceof FlagError) throw new UsageError(`--${err.flag} ${err.problem}`);
    throw err;
  }
}

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
  const { values: v } = parse(argv, {
    ...CONNECTION_FLAGS,
    mode: { type: "string" },
    levels: { type: "string" },
    requests: { type: "string" },
    duration: { type: "string" },
    warmup: { type: "string" },
    arrival: { type: "string" },
    burstiness: { type: "string" },
    "max-in-flight": { type: "string" },
    seed: { type: "string" },
    "prompt-tokens": { type: "string" },
    "max-tokens": { type: "string" },
    prompts: { type: "string" },
    "slo-ttft-ms": { type: "string" },
    "slo-tpot-ms": { type: "string" },
    "slo-e2e-ms": { type: "string" },
    out: { type: "string" },
    records: { type: "string" },
    resume: { type: "boolean" },
    "metrics-interval-ms": { type: "string" },
    "server-limit": { type: "string", multiple: true },
    plots: { type: "boolean" },
  });
  if (v.help) {
    process.stdout.write(SWEEP_HELP);
    return 0;
  }
  const conn = connectionValues(v);
  const config = sweepConfigFrom(v);
  const out = str(v, "out", "results/sweep.json");
  const records = oneOf(v, "records", ["inline", "file", "none"] as const, "inline");
  const quiet = v.quiet === true;
  if (config.mode === "open" && config.requests_per_level === null && config.duration_s === null) {
    throw new UsageError("open loop needs --requests or --duration");
  }
  let serverLimits: Record<string, string | number>;
  try {
    serverLimits = parseServerLimits((Array.isArray(v["server-limit"]) ? v["server-limit"] : []).map(String));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const model = await resolveModel(conn);
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
  const progress = progressPrinter(quiet);
  const doc = await runSweep({
    ...conn,
    model,
    config,
    out,
    records,
    resume: v.resume === true,
    serverLimits,
    onNotice: (m) => process.stderr.write(`${process.stderr.isTTY ? "\r\x1b[K" : ""}notice: ${m}\n`),
    ...(progress ? { onProgress: progress } : {}),
    onLevel: () => {
      if (process.stderr.isTTY && !quiet) process.stderr.write("\r\x1b[K");
    },
    shouldStop: () => stop,
  });
  process.off("SIGINT", onSig);
  process.off("SIGTERM", onSig);
  process.stdout.write(`${markdownTable(doc.levels)}\n`);
  if (out !== null) {
    const p = outputPaths(out);
    process.stderr.write(
      `wrote ${p.json}, ${p.csv}, ${p.md}${records === "file" ? `, ${p.requestsFile}` : ""}\n`,
    );
  }
  if (v.plots && out !== null) {
    const { writePlots } = await import("../core/plots.ts");
    const { plotsDir } = await import("./tools-command.ts");
    const files = await writePlots(doc, plotsDir(out));
    process.stderr.write(`wrote ${files.length} charts to ${plotsDir(out)}\n`);
  }
  if (stop) return 130;
  const measured = doc.levels.reduce((n, l) => n + l.requests, 0);
  const ok = doc.levels.reduce((n, l) => n + l.ok, 0);
  if (measured > 0 && ok === 0) {
    process.stderr.write("error: every request failed; see errors_by_code in the results\n");
    return 1;
  }
  return 0;
}
