/** `tokenbench profile`: the single-stream serving protocol from the command line. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { defaultProfileConfig, profileSummaryText, runProfile } from "../core/profile.ts";
import { parseServerLimits } from "../core/server-info.ts";
import { parseResultDocument } from "../schema/v1.ts";
import { nonNegInt, num, numberList, oneOf, parse, positive, positiveInt, str, UsageError } from "./args.ts";
import { CONNECTION_FLAGS, connectionValues } from "./sweep-command.ts";

export const PROFILE_HELP = `tokenbench profile: single-stream serving profile (readiness, metadata, calibration,
fresh prefill, steady decode, prefix cache)

  connection flags as for sweep: --base-url --model --api --api-key --header --timeout-s --extra-body
  --targets LIST          prompt sizes to calibrate and measure (default 512,1024,2048,4096)
  --repetitions N         repetitions per measurement (default 3)
  --warmup-runs N         excluded warmup requests (default 1)
  --decode-tokens N       tokens per steady-decode run (default 256)
  --suffix-tokens N       size of the small_suffix case (default 32)
  --prefix-target N       prompt size for the prefix-cache cases (default: the largest target)
  --thinking kwargs|thinking|both|none  how to disable thinking (default kwargs:
                          chat_template_kwargs.enable_thinking=false; thinking: {type: disabled})
  --ready-timeout-s S     wait this long for readiness (default 300)
  --server-limit K=V      record a limit the server does not expose (repeatable), e.g. max_running_requests=8
  --out FILE.json         (default results/profile.json)
  --plots                 SVG and PNG charts beside --out
`;

export async function profileCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    ...CONNECTION_FLAGS,
    targets: { type: "string" },
    repetitions: { type: "string" },
    "warmup-runs": { type: "string" },
    "decode-tokens": { type: "string" },
    "suffix-tokens": { type: "string" },
    "prefix-target": { type: "string" },
    thinking: { type: "string" },
    "ready-timeout-s": { type: "string" },
    "server-limit": { type: "string", multiple: true },
    out: { type: "string" },
    plots: { type: "boolean" },
  });
  if (v.help) {
    process.stdout.write(PROFILE_HELP);
    return 0;
  }
  const conn = connectionValues(v);
  const targets = numberList(v, "targets", [512, 1024, 2048, 4096], positiveInt, "positive integers");
  let limits: Record<string, string | number>;
  try {
    limits = parseServerLimits((Array.isArray(v["server-limit"]) ? v["server-limit"] : []).map(String));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const d = defaultProfileConfig({ targets });
  const out = str(v, "out", "results/profile.json");
  const quiet = v.quiet === true;
  const doc = await runProfile({
    ...conn,
    serverLimits: limits,
    config: {
      targets,
      repetitions: num(v, "repetitions", d.repetitions, positiveInt, "a positive integer")!,
      warmup_runs: num(v, "warmup-runs", d.warmup_runs, nonNegInt, "a non-negative integer")!,
      decode_tokens: num(
        v,
        "decode-tokens",
        d.decode_tokens,
        (n) => Number.isInteger(n) && n >= 2,
        "an integer >= 2",
      )!,
      suffix_tokens: num(v, "suffix-tokens", d.suffix_tokens, positiveInt, "a positive integer")!,
      prefix_target: num(v, "prefix-target", d.prefix_target, positiveInt, "a positive integer")!,
      thinking: oneOf(v, "thinking", ["kwargs", "thinking", "both", "none"] as const, d.thinking),
      ready_timeout_s: num(
        v,
        "ready-timeout-s",
        d.ready_timeout_s,
        positive,
        "a positive number of seconds",
      )!,
      extra_body: conn.extraBody,
      header_names: Object.keys(conn.headers),
    },
    onNotice: quiet ? () => {} : (m) => process.stderr.write(`notice: ${m}\n`),
  });
  parseResultDocument(doc);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`);
  process.stdout.write(`${profileSummaryText(doc)}\n`);
  process.stderr.write(`wrote ${out}\n`);
  if (v.plots) {
    const { writePlots } = await import("../core/plots.ts");
    const { plotsDir } = await import("./tools-command.ts");
    const files = await writePlots(doc, plotsDir(out));
    process.stderr.write(`wrote ${files.length} charts to ${plotsDir(out)}\n`);
  }
  return 0;
}
