/** The run's place in GitHub: repository, commit (the PR head, not the merge commit), PR, runner. */
import type { GitInfo } from "./types.ts";

export interface RunContext {
  repository: string | null;
  git: GitInfo;
  eventName: string | null;
  isFork: boolean;
  serverUrl: string;
  apiUrl: string;
  runId: string | null;
  runUrl: string | null;
  runnerName: string | null;
  runnerOs: string | null;
}

type Payload = {
  pull_request?: {
    number?: number;
    head?: { sha?: string; ref?: string; repo?: { full_name?: string; fork?: boolean } };
    base?: { ref?: string; repo?: { full_name?: string } };
  };
  workflow_run?: {
    head_sha?: string;
    head_branch?: string;
    pull_requests?: { number?: number; base?: { ref?: string } }[];
  };
};

export function runContext(env: Record<string, string | undefined>, payload: Payload | null): RunContext {
  const repository = env.GITHUB_REPOSITORY ?? null;
  const pr = payload?.pull_request;
  const ref = env.GITHUB_REF ?? null;
  const refBranch = ref?.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : null;
  let sha = env.GITHUB_SHA ?? null;
  let branch = env.GITHUB_HEAD_REF || refBranch;
  let base: string | null = env.GITHUB_BASE_REF || null;
  let prNumber: number | null = null;
  let isFork = false;
  if (pr) {
    sha = pr.head?.sha ?? sha; // the PR head, not the synthetic merge commit
    branch = pr.head?.ref ?? branch;
    base = pr.base?.ref ?? base;
    prNumber = typeof pr.number === "number" ? pr.number : null;
    const headRepo = pr.head?.repo?.full_name;
    isFork =
      pr.head?.repo?.fork === true ||
      (headRepo !== undefined && headRepo !== (pr.base?.repo?.full_name ?? repository));
  } else if (payload?.workflow_run) {
    const wr = payload.workflow_run;
    sha = wr.head_sha ?? sha;
    branch = wr.head_branch ?? branch;
    const p0 = wr.pull_requests?.[0];
    if (p0) {
      prNumber = p0.number ?? null;
      base = p0.base?.ref ?? base;
    }
  }
  const serverUrl = env.GITHUB_SERVER_URL ?? "https://github.com";
  const runId = env.GITHUB_RUN_ID ?? null;
  const attempt = Number(env.GITHUB_RUN_ATTEMPT ?? "");
  return {
    repository,
    git: {
      sha,
      ref,
      branch: branch ?? null,
      base_branch: base,
      pr_number: prNumber,
      workflow_run_id: runId,
      run_attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : null,
    },
    eventName: env.GITHUB_EVENT_NAME ?? null,
    isFork,
    serverUrl,
    apiUrl: env.GITHUB_API_URL ?? "https://api.github.com",
    runId,
    runUrl: repository && runId ? `${serverUrl}/${repository}/actions/runs/${runId}` : null,
    runnerName: env.RUNNER_NAME ?? null,
    runnerOs: env.RUNNER_OS ?? null,
  };
}
