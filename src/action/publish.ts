/**
 * Talking to the results service: upload with retries (network errors and 5xx, exponential
 * backoff), and the compare call. No @actions/* here, so the demo uses the very same code.
 */
import type { ResultDocument } from "../schema/v1.ts";
import type { CompareResponse, IngestResponse } from "../shared/api-types.ts";

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
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function uploadResults(
  resultsUrl: string,
  doc: ResultDocument,
  token: string,
  retry: RetryOptions = { attempts: 4, baseDelayMs: 1000 },
  fetchImpl: typeof fetch = fetch,
): Promise<UploadResult> {
  const body = JSON.stringify({ ...doc, requests: null, requests_file: null });
  let lastErr: string | null = null;
  let status: number | null = null;
  const sleep = retry.sleep ?? defaultSleep;
  for (let i = 1; i <= retry.attempts; i++) {
    try {
      const res = await fetchImpl(`${resultsUrl}/api/v1/runs`, {
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
      let j: Partial<IngestResponse> & { error?: { code?: string; message?: string } } = {};
      try {
        j = JSON.parse(text);
      } catch {
        j = {};
      }
      if (res.ok) {
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
      lastErr = `HTTP ${res.status} ${j.error?.code ?? ""}: ${j.error?.message ?? text.slice(0, 300)}`;
      if (res.status < 500) break; // a 4xx will not get better by retrying
    } catch (err) {
      lastErr = `network error: ${(err as Error).message}`;
      status = null;
    }
    if (i < retry.attempts) await sleep(retry.baseDelayMs * 2 ** (i - 1));
  }
  return {
    ok: false,
    status,
    runId: null,
    runUrl: null,
    created: false,
    attempts: retry.attempts,
    error: lastErr,
  };
}

export async function fetchCompare(
  resultsUrl: string,
  repository: string,
  runId: string,
  baseBranch: string | null,
  token: string | null,
  fetchImpl: typeof fetch = fetch,
): Promise<CompareResponse | null> {
  const q = new URLSearchParams({ head: runId });
  if (baseBranch) q.set("base_branch", baseBranch);
  try {
    const res = await fetchImpl(`${resultsUrl}/api/v1/repos/${repository}/compare?${q}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (!res.ok) return null;
    return (await res.json()) as CompareResponse;
  } catch {
    return null;
  }
}
