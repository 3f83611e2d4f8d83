/** The run's place in GitHub: repository, commit (the PR head, not the merge commit), PR, runner. */

import { type GitHubApi, github } from "./github.ts";
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
  repository?: { default_branch?: string };
  pull_request?: {
    number?: number;
    head?: { sha?: string; ref?: string; repo?: { full_name?: string; fork?: boolean } };
    base?: { ref?: string; repo?: { full_name?: string } };
  };
  workflow_run?: {
    id?: number;
    run_attempt?: number;
    event?: string;
    head_sha?: string;
    head_branch?: string;
    head_repository?: { full_name?: string; owner?: { login?: string } };
    pull_requests?: { number?: number; base?: { ref?: string } }[];
  };
};

export type { Payload };

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
    // The run that measured: its commit and branch, never the default branch this job runs on.
    const wr = payload.workflow_run;
    sha = wr.head_sha ?? null;
    branch = wr.head_branch ?? null;
    const headRepo = wr.head_repository?.full_name;
    if (headRepo && repository && headRepo.toLowerCase() !== repository.toLowerCase()) {
      // A fork's branch is recorded as GitHub labels it, `owner:branch`: a fork's "main" is not ours.
      isFork = true;
      branch = `${wr.head_repository?.owner?.login ?? headRepo.split("/")[0]}:${wr.head_branch ?? ""}`;
    }
    const p0 = wr.pull_requests?.[0];
    if (p0) {
      prNumber = typeof p0.number === "number" ? p0.number : null;
      base = p0.base?.ref ?? base;
    }
  }
  const serverUrl = env.GITHUB_SERVER_URL ?? "https://github.com";
  const runId = env.GITHUB_RUN_ID ?? null;
  const attempt = Number(env.GITHUB_RUN_ATTEMPT ?? "");
  const wr = pr ? undefined : payload?.workflow_run;
  const measuredRunId = wr && typeof wr.id === "number" ? String(wr.id) : runId;
  const measuredAttempt = wr && typeof wr.run_attempt === "number" ? wr.run_attempt : attempt;
  return {
    repository,
    git: {
      sha,
      ref,
      branch: branch ?? null,
      base_branch: base,
      pr_number: prNumber,
      workflow_run_id: measuredRunId,
      run_attempt: Number.isInteger(measuredAttempt) && measuredAttempt > 0 ? measuredAttempt : null,
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

/**
 * The pull request a workflow_run came from, when the event does not say (GitHub leaves
 * `pull_requests` empty for forks): the open PR whose head is that fork's branch at that commit,
 * found through the API with the job's token. Null when there is none or the API cannot tell.
 */
export async function findForkPullRequest(
  gh: GitHubApi,
  payload: Payload | null,
  /** Told why, when the API could not say (an error answer, a body that is not its JSON). */
  onProblem: (message: string) => void = () => {},
): Promise<{ number: number; base: string | null } | null> {
  const wr = payload?.workflow_run;
  const owner = wr?.head_repository?.owner?.login ?? wr?.head_repository?.full_name?.split("/")[0];
  if (!wr?.head_sha || !wr.head_branch || !owner) return null;
  const q = new URLSearchParams({ state: "open", head: `${owner}:${wr.head_branch}`, per_page: "100" });
  try {
    const list = await github<{ number?: unknown; head?: { sha?: unknown }; base?: { ref?: unknown } }[]>(
      gh,
      "GET",
      `/repos/${gh.repository}/pulls?${q}`,
    );
    const hit = Array.isArray(list) ? list.find((p) => p.head?.sha === wr.head_sha) : undefined;
    if (!hit || typeof hit.number !== "number" || !Number.isInteger(hit.number) || hit.number <= 0)
      return null;
    return { number: hit.number, base: typeof hit.base?.ref === "string" ? hit.base.ref : null };
  } catch (err) {
    onProblem((err as Error).message);
    return null;
  }
}

/** The folder the Action reads its inputs' files from (and only from): the job's workspace. */
export const workspace = (): string => process.env.GITHUB_WORKSPACE || process.cwd();
