/**
 * What an upload must mean, beyond its shape: rules the results service applies to every
 * document it stores and the Action applies to an artifact before publishing it. Pure; no I/O.
 */
import type { ResultDocument } from "./v1.ts";

/** GitHub's rules: owner 1–39 letters, digits or inner hyphens; name 1–100 of [A-Za-z0-9._-], not "." or "..". */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * The canonical (lower-case) `owner/name`, or null when `name` cannot be a GitHub repository.
 * GitHub compares repository names case-insensitively, so the service does too.
 */
export function canonicalRepository(name: string): string | null {
  const parts = name.split("/");
  if (parts.length !== 2) return null;
  const [owner, repo] = parts as [string, string];
  if (!OWNER.test(owner) || !NAME.test(repo) || repo === "." || repo === "..") return null;
  return `${owner}/${repo}`.toLowerCase();
}

/** How far a document's `created_at` may lie ahead of the service's clock (clock skew). */
export const MAX_FUTURE_SKEW_MS = 10 * 60 * 1000;

export interface UploadIssue {
  /** Stable error code the service answers with (422). */
  code:
    | "created_at_future"
    | "repository_missing"
    | "repository_invalid"
    | "no_levels"
    | "profile_missing"
    | "figure_impossible";
  path: string;
  message: string;
}

/**
 * Slack on the physical bounds below: figures are computed from the same counts but rounded on
 * the way (a rate to 4 significant digits, a wall time to the millisecond).
 */
const SLACK = 1.01;

/**
 * What no figure of 2026's hardware can pass, with room to spare: one stream's decode (the
 * fastest speculative decoders stream a few thousand tokens a second), one server's output, one
 * GPU's power (the largest accelerators draw under 2 kW).
 */
export const PHYSICS = { decodeTokS: 100_000, levelTokS: 10_000_000, gpuW: 5000 } as const;

/**
 * Figures a level cannot have. Its rates are counts over its wall time (first measured send to
 * last end), so a rate times the wall time is at most the count it came from: output tok/s ≤
 * completion tokens ÷ wall time, total tok/s ≤ all tokens ÷ wall time, req/s ≤ successful
 * requests ÷ wall time, goodput ≤ req/s. Every measured request lies inside the wall time, so no
 * latency (TTFT, ITL, TPOT, E2E, any percentile or the maximum) is longer than it. A steady
 * level's rates are counts inside its window over the window (never longer than the wall time),
 * so they are bounded by the level's counts over the window instead.
 */
export function impossibleFigures(
  levels: ResultDocument["levels"],
  config: ResultDocument["config"] = null,
): UploadIssue[] {
  const out: UploadIssue[] = [];
  const no = (path: string, message: string) => out.push({ code: "figure_impossible", path, message });
  let windowed = false;
  const wallBound = (what: string, value: number, count: number, wallS: number, i: number, unit: string) => {
    if (value * wallS <= count * SLACK + 1) return;
    out.push({
      code: "figure_impossible",
      path: `levels[${i}].${what}`,
      message: `${value} ${unit} over ${wallS} s is more than the level's ${count} counted (${what} ≤ count ÷ ${windowed ? "steady_state.window_s" : "wall_time_s"})`,
    });
  };
  levels.forEach((l, i) => {
    const wall = l.wall_time_s;
    windowed = l.steady_state?.steady === true && l.steady_state.window_s > 0;
    const rateS = windowed ? Math.min(wall, l.steady_state!.window_s) : wall;
    wallBound("output_tok_s", l.output_tok_s, l.completion_tokens_total, rateS, i, "tok/s");
    wallBound(
      "total_tok_s",
      l.total_tok_s,
      l.prompt_tokens_total + l.completion_tokens_total,
      rateS,
      i,
      "tok/s",
    );
    wallBound("req_s", l.req_s, l.ok, rateS, i, "req/s");
    if (l.goodput_req_s > l.req_s * SLACK + 1e-9)
      out.push({
        code: "figure_impossible",
        path: `levels[${i}].goodput_req_s`,
        message: `goodput ${l.goodput_req_s} req/s is more than the level's ${l.req_s} req/s`,
      });
    // Counts raised to match a rate are still bounded by physics: no stream decodes faster than
    // PHYSICS.decodeTokS, no server serves more than PHYSICS.levelTokS, and no request returns more
    // than the max_tokens it asked (a dataset's or trace's lines may ask for their own).
    if (l.output_tok_s > PHYSICS.levelTokS)
      no(
        `levels[${i}].output_tok_s`,
        `${l.output_tok_s} tok/s is beyond any server (at most ${PHYSICS.levelTokS})`,
      );
    for (const [stat, v] of Object.entries(l.decode_tok_s))
      if (stat !== "n" && typeof v === "number" && v > PHYSICS.decodeTokS)
        no(
          `levels[${i}].decode_tok_s.${stat}`,
          `${v} tok/s is beyond any one stream's decode (at most ${PHYSICS.decodeTokS})`,
        );
    const perRequest =
      config && !config.dataset && !config.trace && !config.agent_sessions ? config.max_tokens : null;
    if (perRequest !== null && perRequest > 0 && l.completion_tokens_total > l.ok * perRequest * SLACK + 1)
      no(
        `levels[${i}].completion_tokens_total`,
        `${l.completion_tokens_total} tokens from ${l.ok} requests is more than their ${perRequest} max_tokens each`,
      );
    const g = l.gpu;
    if (g) {
      const nonNegative = [
        "energy_j",
        "mean_power_w",
        "peak_power_w",
        "idle_power_w",
        "output_tok_per_j",
        "j_per_output_tok",
        "j_per_request",
        "w_per_user",
        "usd_per_m_output_tok",
        "usd_per_m_total_tok",
      ] as const;
      for (const k of nonNegative) {
        const v = g[k];
        if (typeof v === "number" && v < 0) no(`levels[${i}].gpu.${k}`, `${v} cannot be negative`);
      }
      const gpus = Math.max(1, g.per_gpu?.length ?? 1);
      for (const k of ["mean_power_w", "peak_power_w", "idle_power_w"] as const) {
        const v = g[k];
        if (typeof v === "number" && v > PHYSICS.gpuW * gpus)
          no(
            `levels[${i}].gpu.${k}`,
            `${v} W is beyond ${gpus} GPU${gpus === 1 ? "" : "s"} (at most ${PHYSICS.gpuW} W each)`,
          );
      }
    }
    const maxMs = wall * 1000 * SLACK + 1;
    for (const key of ["ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "e2e_stream_ms"] as const) {
      const s = l[key] as Record<string, unknown>;
      for (const [stat, v] of Object.entries(s))
        if (stat !== "n" && typeof v === "number" && v > maxMs)
          out.push({
            code: "figure_impossible",
            path: `levels[${i}].${key}.${stat}`,
            message: `${v} ms is longer than the level's wall time of ${wall} s: every measured request lies inside it`,
          });
    }
  });
  return out;
}

/** Reasons a schema-valid document must still not be stored; empty when it may be. */
export function uploadIssues(doc: ResultDocument, nowMs: number): UploadIssue[] {
  const issues: UploadIssue[] = [];
  const t = Date.parse(doc.created_at);
  if (t > nowMs + MAX_FUTURE_SKEW_MS)
    issues.push({
      code: "created_at_future",
      path: "created_at",
      message: `${doc.created_at} is in the future (the service's clock says ${new Date(nowMs).toISOString()})`,
    });
  if (doc.repository == null)
    issues.push({
      code: "repository_missing",
      path: "repository",
      message: 'the document must name its "repository": "owner/name"',
    });
  else if (canonicalRepository(doc.repository) === null)
    issues.push({
      code: "repository_invalid",
      path: "repository",
      message: `${JSON.stringify(doc.repository.slice(0, 120))} is not a GitHub repository name (owner/name)`,
    });
  if (doc.kind === "sweep" && doc.levels.length === 0)
    issues.push({
      code: "no_levels",
      path: "levels",
      message: "a sweep without a measured level has nothing to store",
    });
  issues.push(...impossibleFigures(doc.levels, doc.config));
  if (doc.kind === "profile" && (doc.profile == null || doc.profile === undefined))
    issues.push({
      code: "profile_missing",
      path: "profile",
      message: "a profile document without its profile has nothing to store",
    });
  return issues;
}
