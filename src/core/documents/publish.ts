/**
 * Talking to the results service: upload with retries (network errors and 5xx, exponential
 * backoff), and the compare call: the Action, `tokenbench upload` and the demo use this one code.
 */
import type { ResultDocument } from "../../schema/v1.ts";
import type { ChangePointsResponse, CompareResponse, IngestResponse } from "../../shared/api-types.ts";
import { documentSamples } from "../../shared/samples.ts";
import { answerText, failureText, fetchError, RemoteAnswerError, readJson, secs } from "./remote.ts";

export type { CompareResponse };

export interface UploadResult {
  ok: boolean;
  status: number | null;
  runId: string | null;
  runUrl: string | null;
  created: boolean;
  attempts: number;
  error: string | null;
}

export interface RetryOptions {
  attempts: number;
  baseDelayMs: number;
  /** Each attempt is abandoned after this long (a service that never answers). */
  attemptTimeoutMs?: number;
  /** No attempt starts, or runs on, past this since the first. */
  totalTimeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_RETRY: RetryOptions = {
  attempts: 4,
  baseDelayMs: 1000,
  attemptTimeoutMs: 60_000,
  totalTimeoutMs: 180_000,
};

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function uploadResults(
  resultsUrl: string,
  doc: ResultDocument,
  token: string,
  retry: RetryOptions = DEFAULT_RETRY,
  fetchImpl: typeof fetch = fetch,
): Promise<UploadResult> {
  // The records stay in the artifact; their samples go along, so the service's bootstrap is the file's.
  const samples = documentSamples(doc);
  const body = JSON.stringify({
    ...doc,
    requests: null,
    requests_file: null,
    ...(samples.length > 0 ? { samples } : {}),
    // the raw GPU reads stay in the artifact too; each level's energy figures go
    ...(doc.gpu_telemetry ? { gpu_telemetry: { ...doc.gpu_telemetry, samples: null } } : {}),
  });
  let lastErr: string | null = null;
  let status: number | null = null;
  const sleep = retry.sleep ?? defaultSleep;
  const t0 = Date.now();
  const total = retry.totalTimeoutMs ?? Number.POSITIVE_INFINITY;
  let i = 1;
  for (; i <= retry.attempts; i++) {
    const left = total - (Date.now() - t0);
    const attemptMs = Math.min(retry.attemptTimeoutMs ?? Number.POSITIVE_INFINITY, left);
    try {
      const res = await fetchImpl(`${resultsUrl}/api/v1/runs`, {
        ...(Number.isFinite(attemptMs) ? { signal: AbortSignal.timeout(attemptMs) } : {}),
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "user-agent": "tokenbench-action",
        },
        body,
      });
      status = res.status;
      const text = await res.text();
      const service = `the results service (POST ${resultsUrl}/api/v1/runs)`;
      let j: (Partial<IngestResponse> & { error?: { code?: string; message?: string } }) | null = null;
      try {
        j = JSON.parse(text);
      } catch {
        j = null;
      }
      if (res.ok && j !== null) {
        return {
          ok: true,
          status,
          runId: j.run?.id ?? null,
          runUrl: j.url ?? null,
          created: j.created === true,
          attempts: i,
          error: null,
        };
      }
      lastErr =
        j?.error?.message !== undefined
          ? `HTTP ${res.status} ${j.error.code ?? ""}: ${j.error.message.slice(0, 300)}`
          : `${answerText(service, res, text)}${res.ok ? ", not the JSON it speaks (a proxy in front of it?)" : ""}`;
      if (res.status < 500) break; // a 4xx will not get better by retrying
    } catch (err) {
      lastErr = fetchError(err, attemptMs);
      status = null;
    }
    const delay = retry.baseDelayMs * 2 ** (i - 1);
    if (i < retry.attempts && Date.now() - t0 + delay >= total) {
      lastErr = `${lastErr}; gave up: the upload's total deadline of ${secs(total)} would pass before another attempt`;
      break;
    }
    if (i < retry.attempts) await sleep(delay);
  }
  return {
    ok: false,
    status,
    runId: null,
    runUrl: null,
    created: false,
    attempts: Math.min(i, retry.attempts),
    error: lastErr,
  };
}

export type CompareResult = { ok: true; compare: CompareResponse } | { ok: false; error: string };

/** The service's compare of `runId` against the base branch; never throws, never waits past `timeoutMs`. */
export async function fetchCompare(
  resultsUrl: string,
  repository: string,
  runId: string,
  baseBranch: string | null,
  token: string | null,
  fetchImpl: typeof fetch = fetch,
  timeoutMs = 30_000,
  gating: { thresholds: string | null; gate: string | null; fwer: number; failOn: string } | null = null,
): Promise<CompareResult> {
  const q = new URLSearchParams({ head: runId });
  if (baseBranch) q.set("base_branch", baseBranch);
  if (gating?.thresholds) q.set("thresholds", gating.thresholds);
  if (gating?.gate) q.set("gate", gating.gate);
  if (gating) q.set("fwer", String(gating.fwer));
  if (gating) q.set("fail_on", gating.failOn);
  try {
    const res = await fetchImpl(`${resultsUrl}/api/v1/repos/${repository}/compare?${q}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status === 401)
      return {
        ok: false,
        error:
          "the results service needs a read token to compare (HTTP 401): pass its READ_TOKEN as the read-token input",
      };
    const service = `the results service (GET ${resultsUrl}/api/v1/repos/${repository}/compare)`;
    if (!res.ok) return { ok: false, error: await failureText(res, service) };
    return { ok: true, compare: await readJson<CompareResponse>(res, service) };
  } catch (err) {
    if (err instanceof RemoteAnswerError) return { ok: false, error: err.message };
    return { ok: false, error: fetchError(err, timeoutMs) };
  }
}

/**
 * On a push to the default branch: the change points of the headline series that fall among its
 * last runs, as lines for the job summary ("a new segment started N runs ago at ..."). A change
 * needs a few runs after it to be seen, so it is reported from then on, naming its run.
 */
export async function recentChangePoints(
  resultsUrl: string,
  repository: string,
  branch: string,
  series: { benchmark: string; measure: string; label: string }[],
  token: string | null,
  fetchImpl: typeof fetch = fetch,
  withinRuns = 10,
): Promise<string[]> {
  const lines: string[] = [];
  for (const s of series) {
    const q = new URLSearchParams({ benchmark: s.benchmark, measure: s.measure, branch });
    try {
      const res = await fetchImpl(`${resultsUrl}/api/v1/repos/${repository}/change-points?${q}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(30_000),
      });
      if (!res.ok) continue;
      const j = await readJson<ChangePointsResponse>(res, "the results service (GET .../change-points)");
      const last = j.change_points.at(-1);
      if (!last) continue;
      const ago = j.points - last.index - 1;
      if (ago >= withinRuns) continue;
      const sha = last.commit_sha ? ` (commit \`${last.commit_sha.slice(0, 7)}\`)` : "";
      const d =
        last.delta_pct === null ? "" : ` ${last.delta_pct > 0 ? "+" : ""}${last.delta_pct.toFixed(1)} %`;
      lines.push(
        `- **${s.label}** at ${s.benchmark}: a new segment started ${ago === 0 ? "with this run" : `${ago} run(s) ago`} at run ${last.run_id}${sha}:${d} (p ${last.p_value.toPrecision(2)})`,
      );
    } catch {
      // a summary line is not worth failing for
    }
  }
  return lines;
}
