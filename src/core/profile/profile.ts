/**
 * `tokenbench profile`: the single-stream serving protocol. In order: readiness, metadata
 * snapshot, warmup (excluded), prompt calibration, fresh prefill, steady decode, prefix cache
 * (fresh -> identical -> small_suffix). Greedy, thinking disabled, ignore_eos. Every figure is
 * client-wall: it includes queueing, prefill, scheduling, detokenization and SSE delivery.
 */
import { randomBytes } from "node:crypto";
import { UsageError } from "../../schema/errors.ts";
import type {
  ProfileConfig,
  ProfileSample,
  ProfileSection,
  RequestRecord,
  ResultDocument,
} from "../../schema/v1.ts";
import { maxOf, minOf } from "../../shared/extremes.ts";
import { warmUpClientPath } from "../client/jit-warmup.ts";
import { StreamClient } from "../client/stream-client.ts";
import { buildDocument, type Provenance } from "../results/document.ts";
import { captureEnvironment } from "../results/environment.ts";
import { FORMULAS } from "../results/metrics.ts";
import {
  type Counter,
  calibrate,
  profilePrompt,
  servedCounter,
  TOLERANCE_RULE,
} from "../server/calibration.ts";
import type { Preflight } from "../server/preflight.ts";
import { splitBaseUrls } from "../server/target.ts";
import { defaultsOf, type Values } from "../settings/setting.ts";
import { CONNECTION, PROFILE } from "../settings/table.ts";
import { summarizeProfile } from "./summary.ts";

export const PROFILE_FORMULAS: Record<string, string> = {
  client_wall_ttft_ms: "first content event - send, one stream at a time",
  client_wall_effective_prefill_tps: "(prompt_tokens - cached_tokens) / (client_wall_ttft_ms / 1000)",
  client_wall_decode_tps: "(completion_tokens - 1) / ((last content event - first content event) / 1000)",
  client_wall_total_ms: "end of stream - send",
  ttft_ratio: "median TTFT of the case / median TTFT of fresh, same repetitions",
  cached_tokens:
    "usage.prompt_tokens_details.cached_tokens; absent means 0 only when the server is known to report it",
};

/** A complete profile configuration with the table's defaults; override what you need. */
export function defaultProfileConfig(over: Partial<ProfileConfig> = {}): ProfileConfig {
  const targets = over.targets ?? PROFILE.targets.default;
  const base = profileConfigOf({ ...defaultsOf(PROFILE), targets }, defaultsOf(CONNECTION));
  return { ...base, ...over };
}

export interface ProfileOptions {
  /** First contact's outcome (`preflight(target, null, ...)`): the server, model resolved, and its snapshot. */
  pre: Preflight;
  timeoutS: number;
  config: ProfileConfig;
  provenance?: Provenance | null;
  onNotice?: (m: string) => void;
}

export function thinkingBody(mode: ProfileConfig["thinking"]): Record<string, unknown> {
  const b: Record<string, unknown> = {};
  if (mode === "kwargs" || mode === "both") b.chat_template_kwargs = { enable_thinking: false };
  if (mode === "thinking" || mode === "both") b.thinking = { type: "disabled" };
  return b;
}

function sampleFrom(
  phase: ProfileSample["phase"],
  target: number | null,
  repetition: number,
  r: RequestRecord,
  cachedReporting: { known: boolean },
): ProfileSample {
  const ttft = r.first_token_ms !== null ? r.first_token_ms - r.send_ms : null;
  const total = r.end_ms !== null ? r.end_ms - r.send_ms : null;
  const prompt = r.usage?.prompt_tokens ?? null;
  const ct = r.usage?.completion_tokens ?? null;
  let cached = r.usage?.cached_tokens ?? null;
  if (cached === null && cachedReporting.known && r.usage !== null) cached = 0;
  const span =
    r.first_token_ms !== null && r.last_token_ms !== null ? r.last_token_ms - r.first_token_ms : null;
  return {
    phase,
    target_tokens: target,
    repetition,
    prompt_tokens: prompt,
    cached_tokens: cached,
    completion_tokens: ct,
    client_wall_ttft_ms: ttft,
    client_wall_total_ms: total,
    client_wall_decode_tps:
      ct !== null && ct >= 2 && span !== null && span > 0 ? (ct - 1) / (span / 1000) : null,
    client_wall_effective_prefill_tps:
      ttft !== null && ttft > 0 && prompt !== null ? (prompt - (cached ?? 0)) / (ttft / 1000) : null,
    error: r.error,
  };
}

export async function runProfile(opts: ProfileOptions): Promise<ResultDocument> {
  const cfg = opts.config;
  const notice = opts.onNotice ?? (() => {});
  const { target, readiness, server } = opts.pre;
  notice(`server ready after ${readiness.waited_s.toFixed(1)} s (${readiness.probes.at(-1)})`);
  const body = { ...thinkingBody(cfg.thinking), ...cfg.extra_body };
  const originMs = performance.now();
  const originWall = Date.now();
  const client = new StreamClient({
    target,
    timeoutS: opts.timeoutS,
    ignoreEos: true,
    extraBody: body,
    originMs,
  });
  await warmUpClientPath(client.cfg);
  const records: RequestRecord[] = [];
  const samples: ProfileSample[] = [];
  let id = 0;
  const stream = async (prompt: string, maxTokens: number, warmup: boolean) => {
    const r = await client.stream({
      id: id++,
      level: 1,
      warmup,
      prompt,
      maxTokens,
      promptTokensRequested: null,
      intendedSendAbsMs: null,
    });
    records.push(r);
    return r;
  };
  const nonce = () => randomBytes(4).toString("hex");
  // Cached-token reporting: learned from the server's own statement, or from any response.
  const reporting = { known: server.extracted.reports_cached_tokens === true, seenDetails: false };
  const note = (r: RequestRecord) => {
    if (r.usage?.cached_tokens !== null && r.usage?.cached_tokens !== undefined) {
      reporting.known = true;
      reporting.seenDetails = true;
    }
  };
  try {
    for (let i = 0; i < cfg.warmup_runs; i++) {
      const r = await stream(profilePrompt(nonce(), 64, 1000 + i), 8, true);
      note(r);
      samples.push(sampleFrom("warmup", null, i, r, reporting));
    }
    const { counter, overhead } = await servedCounter(target, body);
    if (overhead !== 0)
      notice(`the server adds ${overhead} tokens around each prompt (chat template); sizes include them`);
    notice(`calibrating prompts with ${counter.method}`);
    const sampleNonce = "0a1b2c3d";
    const calibrated = new Map<number, number>();
    const calTargets: ProfileSection["calibration"]["targets"] = [];
    const allTargets = [...new Set([...cfg.targets, cfg.prefix_target])];
    for (const t of allTargets) {
      const c = await calibrate(counter, t, (w) => profilePrompt(sampleNonce, w, t));
      calibrated.set(t, c.words);
      calTargets.push({
        target_tokens: t,
        reached_tokens: c.reached,
        within_tolerance: c.withinTolerance,
        iterations: c.iterations,
      });
      if (!c.withinTolerance)
        notice(`calibration for ${t} tokens reached ${c.reached} (outside ${TOLERANCE_RULE})`);
    }
    // Suffix: words appended to the identical prompt so that it grows by about suffix_tokens.
    const pw = calibrated.get(cfg.prefix_target)!;
    const base = profilePrompt(sampleNonce, pw, cfg.prefix_target);
    const baseCount = await counter.count(base);
    const suffixText = (w: number) => ` ${profilePrompt("suffix00", w, 4242).slice(11)}`;
    // The suffix is sized by what it adds to the prompt as the server counts it, not on its own
    // (counted alone it would carry the chat template's tokens as well).
    const added: Counter = {
      method: counter.method,
      count: async (text) => (await counter.count(base + text)) - baseCount,
    };
    const suf = await calibrate(added, cfg.suffix_tokens, suffixText);
    const suffixWords = suf.words;
    const suffixTokens = suf.reached;

    for (const t of cfg.targets) {
      for (let rep = 0; rep < cfg.repetitions; rep++) {
        const r = await stream(profilePrompt(nonce(), calibrated.get(t)!, t), 1, false);
        note(r);
        samples.push(sampleFrom("prefill", t, rep, r, reporting));
      }
    }
    const decodeWords = calibrated.get(minOf(cfg.targets))!;
    for (let rep = 0; rep < cfg.repetitions; rep++) {
      const r = await stream(profilePrompt(nonce(), decodeWords, 77), cfg.decode_tokens, false);
      note(r);
      samples.push(sampleFrom("decode", null, rep, r, reporting));
    }
    for (let rep = 0; rep < cfg.repetitions; rep++) {
      const p = profilePrompt(nonce(), pw, cfg.prefix_target);
      for (const [phase, prompt] of [
        ["prefix_fresh", p],
        ["prefix_identical", p],
        ["prefix_small_suffix", p + suffixText(suffixWords)],
      ] as const) {
        const r = await stream(prompt, 1, false);
        note(r);
        samples.push(sampleFrom(phase, cfg.prefix_target, rep, r, reporting));
      }
    }
    // Re-derive cached tokens now that reporting is known for the whole run.
    const rebuilt = samples.map((s, i) => {
      const r = records[i]!;
      return sampleFrom(s.phase, s.target_tokens, s.repetition, r, reporting);
    });
    const cachedReporting: ProfileSection["cached_tokens_reporting"] = reporting.seenDetails
      ? rebuilt.some((s, i) => s.cached_tokens === 0 && records[i]!.usage?.cached_tokens === null)
        ? "omitted_when_zero"
        : "reported"
      : reporting.known
        ? "omitted_when_zero"
        : "not_reported";
    if (cachedReporting === "not_reported") {
      notice("the server never reported cached tokens: cached_tokens are unknown (null), not 0");
    }
    const profile: ProfileSection = {
      config: cfg,
      readiness,
      calibration: {
        method: counter.method,
        tolerance_rule: TOLERANCE_RULE,
        targets: calTargets,
        suffix_tokens: suffixTokens,
      },
      cached_tokens_reporting: cachedReporting,
      samples: rebuilt,
      summary: summarizeProfile(rebuilt),
    };
    return buildDocument({
      kind: "profile",
      originWallMs: originWall,
      target,
      environment: await captureEnvironment(),
      formulas: { ...FORMULAS, ...PROFILE_FORMULAS },
      config: null,
      levels: [],
      profile,
      server,
      requests: records,
      complete: true,
      provenance: opts.provenance ?? null,
    });
  } finally {
    await client.close().catch(() => {});
  }
}

export function profileConfigOf(
  v: Values<typeof PROFILE>,
  c: Pick<Values<typeof CONNECTION>, "readyTimeoutS" | "extraBody" | "headers" | "baseUrl">,
): ProfileConfig {
  if (splitBaseUrls(c.baseUrl).length > 1)
    throw new UsageError(
      "--base-url names several servers: a profile measures one server alone (a single stream); profile each of them",
      "--base-url",
    );
  return {
    targets: v.targets,
    repetitions: v.repetitions,
    warmup_runs: v.warmupRuns,
    decode_tokens: v.decodeTokens,
    suffix_tokens: v.suffixTokens,
    prefix_target: v.prefixTarget ?? maxOf(v.targets),
    thinking: v.thinking,
    ready_timeout_s: c.readyTimeoutS,
    extra_body: c.extraBody,
    header_names: Object.keys(c.headers),
  };
}
