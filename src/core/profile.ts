/**
 * `tokenbench profile`: the single-stream serving protocol. In order: readiness, metadata
 * snapshot, warmup (excluded), prompt calibration, fresh prefill, steady decode, prefix cache
 * (fresh -> identical -> small_suffix). Greedy, thinking disabled, ignore_eos. Every figure is
 * client-wall: it includes queueing, prefill, scheduling, detokenization and SSE delivery.
 */
import { randomBytes } from "node:crypto";
import {
  type ProfileConfig,
  type ProfileSample,
  type ProfileSection,
  type RequestRecord,
  type ResultDocument,
  SCHEMA_VERSION,
} from "../schema/v1.ts";
import { calibrate, detectCounter, profilePrompt, TOLERANCE_RULE } from "./calibrate.ts";
import { type ApiKind, StreamClient } from "./client.ts";
import { captureEnvironment } from "./environment.ts";
import { FORMULAS } from "./metrics.ts";
import { snapshotServer, waitReady } from "./server-info.ts";
import { summarize } from "./stats.ts";
import { TOOL_VERSION } from "./version.ts";

export const PROFILE_FORMULAS: Record<string, string> = {
  client_wall_ttft_ms: "first content event - send, one stream at a time",
  client_wall_effective_prefill_tps: "(prompt_tokens - cached_tokens) / (client_wall_ttft_ms / 1000)",
  client_wall_decode_tps: "(completion_tokens - 1) / ((last content event - first content event) / 1000)",
  client_wall_total_ms: "end of stream - send",
  ttft_ratio: "median TTFT of the case / median TTFT of fresh, same repetitions",
  cached_tokens:
    "usage.prompt_tokens_details.cached_tokens; absent means 0 only when the server is known to report it",
};

/** A complete profile configuration with the CLI's defaults; override what you need. */
export function defaultProfileConfig(over: Partial<ProfileConfig> = {}): ProfileConfig {
  const targets = over.targets ?? [512, 1024, 2048, 4096];
  return {
    targets,
    repetitions: 3,
    warmup_runs: 1,
    decode_tokens: 256,
    suffix_tokens: 32,
    prefix_target: Math.max(...targets),
    thinking: "kwargs",
    ready_timeout_s: 300,
    extra_body: {},
    header_names: [],
    ...over,
  };
}

export interface ProfileOptions {
  baseUrl: string;
  api: ApiKind;
  model: string | null;
  apiKey: string | null;
  headers: Record<string, string>;
  timeoutS: number;
  extraBody: Record<string, unknown>;
  config: ProfileConfig;
  serverLimits: Record<string, string | number>;
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

export function summarizeProfile(samples: readonly ProfileSample[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const stat = (xs: (number | null)[]) => {
    const v = xs.filter((x): x is number => x !== null);
    const s = summarize(v);
    // percentiles only where there are enough samples to mean something
    return {
      n: s.n,
      median: s.p50,
      min: s.min,
      max: s.max,
      ...(s.n >= 10 ? { p90: s.p90 } : {}),
      ...(s.n >= 20 ? { p95: s.p95, p99: s.p99 } : {}),
    };
  };
  const ok = samples.filter((s) => s.error === null);
  const targets = [...new Set(ok.filter((s) => s.phase === "prefill").map((s) => s.target_tokens!))];
  out.prefill = Object.fromEntries(
    targets.map((t) => {
      const xs = ok.filter((s) => s.phase === "prefill" && s.target_tokens === t);
      return [
        String(t),
        {
          prompt_tokens: stat(xs.map((x) => x.prompt_tokens)),
          client_wall_ttft_ms: stat(xs.map((x) => x.client_wall_ttft_ms)),
          client_wall_effective_prefill_tps: stat(xs.map((x) => x.client_wall_effective_prefill_tps)),
        },
      ];
    }),
  );
  const dec = ok.filter((s) => s.phase === "decode");
  out.decode = {
    client_wall_decode_tps: stat(dec.map((x) => x.client_wall_decode_tps)),
    client_wall_ttft_ms: stat(dec.map((x) => x.client_wall_ttft_ms)),
  };
  const prefix: Record<string, unknown> = {};
  const fresh = stat(ok.filter((s) => s.phase === "prefix_fresh").map((x) => x.client_wall_ttft_ms));
  for (const phase of ["prefix_fresh", "prefix_identical", "prefix_small_suffix"] as const) {
    const xs = ok.filter((s) => s.phase === phase);
    const ttft = stat(xs.map((x) => x.client_wall_ttft_ms));
    prefix[phase.replace("prefix_", "")] = {
      client_wall_ttft_ms: ttft,
      cached_tokens: stat(xs.map((x) => x.cached_tokens)),
      prompt_tokens: stat(xs.map((x) => x.prompt_tokens)),
      ttft_ratio_vs_fresh:
        ttft.median !== null && fresh.median !== null && fresh.median > 0 ? ttft.median / fresh.median : null,
    };
  }
  out.prefix_cache = prefix;
  out.errors = samples.filter((s) => s.error !== null).length;
  return out;
}

export async function runProfile(opts: ProfileOptions): Promise<ResultDocument> {
  const cfg = opts.config;
  const notice = opts.onNotice ?? (() => {});
  const auth = { ...opts.headers, ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) };
  const readiness = await waitReady({
    baseUrl: opts.baseUrl,
    headers: auth,
    timeoutS: cfg.ready_timeout_s,
    model: opts.model,
    api: opts.api,
  });
  notice(`server ready after ${readiness.waited_s.toFixed(1)} s (${readiness.probes.at(-1)})`);
  const server = await snapshotServer(opts.baseUrl, auth, opts.serverLimits);
  const model =
    opts.model ?? (typeof server.extracted.model_id === "string" ? server.extracted.model_id : null);
  if (model === null)
    throw new ProfileError("model_unknown", "no --model given and the server did not name one");
  const body = { ...thinkingBody(cfg.thinking), ...opts.extraBody };
  const originMs = performance.now();
  const originWall = Date.now();
  const client = new StreamClient({
    baseUrl: opts.baseUrl,
    api: opts.api,
    model,
    apiKey: opts.apiKey,
    headers: opts.headers,
    timeoutS: opts.timeoutS,
    ignoreEos: true,
    extraBody: body,
    originMs,
  });
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
    const counter = await detectCounter({
      baseUrl: opts.baseUrl,
      headers: auth,
      model,
      api: opts.api,
      extraBody: body,
    });
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
    const suf = await calibrate(counter, cfg.suffix_tokens, (w) => suffixText(w).trim());
    const suffixWords = suf.words;
    const suffixTokens = (await counter.count(base + suffixText(suffixWords))) - baseCount;

    for (const t of cfg.targets) {
      for (let rep = 0; rep < cfg.repetitions; rep++) {
        const r = await stream(profilePrompt(nonce(), calibrated.get(t)!, t), 1, false);
        note(r);
        samples.push(sampleFrom("prefill", t, rep, r, reporting));
      }
    }
    const decodeWords = calibrated.get(Math.min(...cfg.targets))!;
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
    return {
      schema_version: SCHEMA_VERSION,
      kind: "profile",
      tool: { name: "tokenbench", version: TOOL_VERSION },
      created_at: new Date(originWall).toISOString(),
      target: { base_url: opts.baseUrl, api: opts.api, model },
      environment: await captureEnvironment(),
      clock: {
        source: "performance.now() (monotonic), ms from origin",
        origin_wall_time: new Date(originWall).toISOString(),
      },
      formulas: { ...FORMULAS, ...PROFILE_FORMULAS },
      config: null,
      levels: [],
      profile,
      server,
      requests: records,
      complete: true,
    };
  } finally {
    await client.close().catch(() => {});
  }
}

export class ProfileError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const fmt = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(d) : "-");

/** Human summary: median / min / max per phase (percentiles when there are enough samples). */
export function profileSummaryText(doc: ResultDocument): string {
  const p = doc.profile!;
  const s = p.summary as Record<string, Record<string, Record<string, Record<string, number | null>>>>;
  const lines: string[] = [];
  lines.push(
    `profile of ${doc.target.model} at ${doc.target.base_url} (${doc.server?.extracted.server_name ?? "server"})`,
  );
  lines.push(
    `calibration: ${p.calibration.method}; ${p.calibration.targets.map((t) => `${t.target_tokens}->${t.reached_tokens}`).join(", ")}`,
  );
  lines.push(`cached tokens reporting: ${p.cached_tokens_reporting}`);
  lines.push("");
  lines.push(
    "| phase | prompt tok | TTFT ms median (min-max) | prefill tok/s median | decode tok/s median (min-max) | cached tok median |",
  );
  lines.push("|---|---:|---:|---:|---:|---:|");
  for (const [t, v] of Object.entries(s.prefill ?? {})) {
    lines.push(
      `| prefill ${t} | ${fmt(v.prompt_tokens?.median, 0)} | ${fmt(v.client_wall_ttft_ms?.median, 1)} (${fmt(v.client_wall_ttft_ms?.min, 1)}-${fmt(v.client_wall_ttft_ms?.max, 1)}) | ${fmt(v.client_wall_effective_prefill_tps?.median, 0)} | | |`,
    );
  }
  const d = (s.decode ?? {}) as unknown as Record<string, Record<string, number | null>>;
  lines.push(
    `| decode | | ${fmt(d.client_wall_ttft_ms?.median, 1)} | | ${fmt(d.client_wall_decode_tps?.median, 1)} (${fmt(d.client_wall_decode_tps?.min, 1)}-${fmt(d.client_wall_decode_tps?.max, 1)}) | |`,
  );
  for (const [k, v] of Object.entries(s.prefix_cache ?? {})) {
    const vv = v as unknown as Record<string, Record<string, number | null> | number | null>;
    const ttft = vv.client_wall_ttft_ms as Record<string, number | null>;
    const cached = vv.cached_tokens as Record<string, number | null>;
    const prompt = vv.prompt_tokens as Record<string, number | null>;
    lines.push(
      `| prefix ${k} | ${fmt(prompt?.median, 0)} | ${fmt(ttft?.median, 1)} (${fmt(ttft?.min, 1)}-${fmt(ttft?.max, 1)}) x${fmt(vv.ttft_ratio_vs_fresh, 2)} | | | ${fmt(cached?.median, 0)} |`,
    );
  }
  return lines.join("\n");
}
