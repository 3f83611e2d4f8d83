/**
 * Job figures: a conversation (`--turns`) is one job, as an agent's session is: a sequence of
 * model calls whose context grows by each answer, with a wait between calls (`--think-time-ms`,
 * the user reading or a tool running). What a team running agents pays for is the job, not the
 * token: how long one takes end to end, how many one user gets through an hour, how much of it
 * is the model's time and how much the wait, and how much of its context the cache served.
 */
import type { LevelResult, RequestRecord } from "../../schema/v1.ts";
import { maxOf, minOf } from "../../shared/extremes.ts";
import { summarize } from "./stats.ts";

/** The time at least one of the calls was in flight (the union of their send-to-end spans), ms. */
function busyMs(calls: readonly RequestRecord[]): number {
  const spans = calls.map((r) => [r.send_ms, r.end_ms!] as const).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let from = Number.NEGATIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const [s, e] of spans) {
    if (s > to) {
      if (to > from) total += to - from;
      from = s;
      to = e;
    } else to = Math.max(to, e);
  }
  return to > from ? total + (to - from) : total;
}

/** The job a record belongs to: its first turn's id (a first turn is its own). */
const jobOf = (r: RequestRecord): number =>
  r.turn === undefined || r.turn === 1 ? r.id : (r.session ?? r.id);

/**
 * The level's jobs: complete ones (every one of `turns` turns measured and answered; an agent's
 * session: each of its `job_calls` calls) give the figures; a job the level's end cut short, or
 * one with a failed call, is counted apart. `turns` null: agent sessions, whose jobs differ in size.
 */
export function jobSummary(
  records: readonly RequestRecord[],
  turns: number | null,
  users: number,
  wallS: number,
): NonNullable<LevelResult["jobs"]> {
  const byJob = new Map<number, RequestRecord[]>();
  for (const r of records) {
    if (r.warmup || r.turn === undefined) continue;
    const k = jobOf(r);
    const rs = byJob.get(k);
    if (rs) rs.push(r);
    else byJob.set(k, [r]);
  }
  const e2eS: number[] = [];
  const calls: number[] = [];
  const outputTokens: number[] = [];
  const waitShares: number[] = [];
  const jobCachedPct: number[] = [];
  let prompt = 0;
  let cached = 0;
  let cacheKnown = false;
  let incomplete = 0;
  for (const rs of byJob.values()) {
    const ok = rs.filter((r) => r.error === null && r.end_ms !== null);
    const seen = new Set(ok.map((r) => r.turn));
    const expected = turns ?? rs[0]!.job_calls ?? 0;
    if (ok.length !== rs.length || seen.size !== expected || !seen.has(1)) {
      incomplete++;
      continue;
    }
    const start = minOf(ok.map((r) => r.send_ms));
    const end = maxOf(ok.map((r) => r.end_ms!));
    const jobMs = end - start;
    const modelMs = busyMs(ok);
    e2eS.push(jobMs / 1000);
    calls.push(ok.length);
    outputTokens.push(ok.reduce((a, r) => a + (r.usage?.completion_tokens ?? 0), 0));
    // the job's time with none of its calls in flight: the waits (think time, tool runs) and the
    // client's own gaps; subagents' calls at once count once
    waitShares.push(jobMs > 0 ? Math.max(0, jobMs - modelMs) / jobMs : 0);
    // a job's own share (every call's count known): one job whose prefix the cache dropped is
    // hidden in the level's share, which the long jobs dominate
    let jobPrompt = 0;
    let jobCached = 0;
    let known = 0;
    for (const r of ok) {
      const u = r.usage;
      if (!u || u.prompt_tokens === null || u.cached_tokens === null) continue;
      cacheKnown = true;
      known++;
      jobPrompt += u.prompt_tokens;
      jobCached += u.cached_tokens;
    }
    prompt += jobPrompt;
    cached += jobCached;
    if (known === ok.length && jobPrompt > 0) jobCachedPct.push((100 * jobCached) / jobPrompt);
  }
  const complete = e2eS.length;
  const mean = (xs: number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  return {
    complete,
    incomplete,
    turns: turns ?? (calls.length > 0 ? maxOf(calls) : 1),
    e2e_s: summarize(e2eS),
    calls_per_job: mean(calls),
    output_tokens_per_job: mean(outputTokens),
    wait_share: mean(waitShares),
    cached_tokens_pct: cacheKnown && prompt > 0 ? (100 * cached) / prompt : null,
    cached_pct_per_job: summarize(jobCachedPct),
    jobs_per_hour_per_user: wallS > 0 && users > 0 ? (3600 * complete) / (wallS * users) : null,
  };
}
