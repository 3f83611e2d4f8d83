/**
 * What a profile's samples come to: median, min and max per phase (percentiles only where there
 * are enough samples), and the human summary the CLI prints.
 */
import type { ProfileSample, ProfileStat, ProfileSummary, ResultDocument } from "../../schema/v1.ts";
import { summarize } from "../results/stats.ts";

export function summarizeProfile(samples: readonly ProfileSample[]): ProfileSummary {
  const stat = (xs: (number | null)[]): ProfileStat => {
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
  const prefill: ProfileSummary["prefill"] = Object.fromEntries(
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
  const fresh = stat(ok.filter((s) => s.phase === "prefix_fresh").map((x) => x.client_wall_ttft_ms));
  const prefixCase = (phase: ProfileSample["phase"]) => {
    const xs = ok.filter((s) => s.phase === phase);
    const ttft = stat(xs.map((x) => x.client_wall_ttft_ms));
    return {
      client_wall_ttft_ms: ttft,
      cached_tokens: stat(xs.map((x) => x.cached_tokens)),
      prompt_tokens: stat(xs.map((x) => x.prompt_tokens)),
      ttft_ratio_vs_fresh:
        ttft.median !== null && fresh.median !== null && fresh.median > 0 ? ttft.median / fresh.median : null,
    };
  };
  return {
    prefill,
    decode: {
      client_wall_decode_tps: stat(dec.map((x) => x.client_wall_decode_tps)),
      client_wall_ttft_ms: stat(dec.map((x) => x.client_wall_ttft_ms)),
    },
    prefix_cache: {
      fresh: prefixCase("prefix_fresh"),
      identical: prefixCase("prefix_identical"),
      small_suffix: prefixCase("prefix_small_suffix"),
    },
    errors: samples.filter((s) => s.error !== null).length,
  };
}

const fmt = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(d) : "-");

/** Human summary: median / min / max per phase (percentiles when there are enough samples). */
export function profileSummaryText(doc: ResultDocument): string {
  const p = doc.profile!;
  const s = p.summary;
  const range = (x: ProfileStat) => `${fmt(x.median, 1)} (${fmt(x.min, 1)}-${fmt(x.max, 1)})`;
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
  for (const [t, v] of Object.entries(s.prefill)) {
    lines.push(
      `| prefill ${t} | ${fmt(v.prompt_tokens.median, 0)} | ${range(v.client_wall_ttft_ms)} | ${fmt(v.client_wall_effective_prefill_tps.median, 0)} | | |`,
    );
  }
  const d = s.decode;
  lines.push(
    `| decode | | ${fmt(d.client_wall_ttft_ms.median, 1)} | | ${range(d.client_wall_decode_tps)} | |`,
  );
  for (const [k, v] of Object.entries(s.prefix_cache)) {
    lines.push(
      `| prefix ${k} | ${fmt(v.prompt_tokens.median, 0)} | ${range(v.client_wall_ttft_ms)} x${fmt(v.ttft_ratio_vs_fresh, 2)} | | | ${fmt(v.cached_tokens.median, 0)} |`,
    );
  }
  return lines.join("\n");
}
