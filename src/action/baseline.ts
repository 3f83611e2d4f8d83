/**
 * Deltas without a results service: the `baseline` input. Either a results file in the
 * repository, or `artifact`: the results artifact of the newest successful run of this workflow
 * on the base branch, found through the GitHub API with the job's token and downloaded with
 * @actions/artifact. The verdicts are then computed as the service computes them (shared/compare.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DefaultArtifactClient } from "@actions/artifact";
import { RemoteAnswerError } from "../core/documents/remote.ts";
import { insideOrRefuse, readResultsDocument } from "../core/results/files.ts";
import { TokenbenchError } from "../schema/errors.ts";
import type { ResultDocument } from "../schema/v1.ts";
import { workspace } from "./context.ts";
import { type GitHubApi, GitHubError, github } from "./github.ts";

export interface Baseline {
  doc: ResultDocument;
  /** Where it came from, in words, for the comment and the log. */
  source: string;
}

export class BaselineError extends TokenbenchError {
  constructor(message: string) {
    super("baseline_unavailable", message);
  }
}

export interface BaselineGitHub extends GitHubApi {
  /** This workflow's name (GITHUB_WORKFLOW): only its runs are baselines. */
  workflow: string | null;
  artifactName: string;
  /** The artifact client (injectable for tests; default @actions/artifact's). */
  download?: (artifactId: number, runId: number, dir: string) => Promise<void>;
}

/** A GitHub call of the artifact look-up: its failure says which permission the token needs. */
async function gh<T>(g: BaselineGitHub, path: string): Promise<T> {
  try {
    return await github<T>(g, "GET", path);
  } catch (err) {
    if (err instanceof GitHubError)
      throw new BaselineError(`${err.message}; the job's token needs actions: read`);
    if (err instanceof RemoteAnswerError) throw new BaselineError(err.message);
    throw err;
  }
}

/** The events whose runs measured the base branch itself (a pull request's run never did). */
const BASE_EVENTS = new Set(["push", "schedule"]);

/**
 * The newest successful run of this workflow on `branch` that kept a results artifact: a run of
 * this repository's own `branch` on a push or a schedule. A pull request's run is never one (a
 * fork may name its branch `main`, and its run shows up under `?branch=main`), nor a run whose head
 * is another repository.
 */
export async function artifactBaseline(g: BaselineGitHub, branch: string): Promise<Baseline> {
  const q = new URLSearchParams({ branch, status: "success", per_page: "20" });
  const { workflow_runs: runs } = await gh<{
    workflow_runs: {
      id: number;
      name?: string;
      head_sha?: string;
      head_branch?: string | null;
      event?: string;
      head_repository?: { full_name?: string } | null;
    }[];
  }>(g, `/repos/${g.repository}/actions/runs?${q}`);
  let skipped = 0;
  for (const run of runs ?? []) {
    if (g.workflow !== null && run.name !== g.workflow) continue;
    if (
      !BASE_EVENTS.has(run.event ?? "") ||
      run.head_repository?.full_name !== g.repository ||
      run.head_branch !== branch
    ) {
      skipped++;
      continue;
    }
    const { artifacts } = await gh<{ artifacts: { id: number; name: string; expired?: boolean }[] }>(
      g,
      `/repos/${g.repository}/actions/runs/${run.id}/artifacts?name=${encodeURIComponent(g.artifactName)}`,
    );
    const art = (artifacts ?? []).find((a) => a.name === g.artifactName && !a.expired);
    if (!art) continue;
    // The Action's own download: under RUNNER_TEMP on a runner, the one place besides the workspace it reads.
    const dir = mkdtempSync(join(process.env.RUNNER_TEMP || tmpdir(), "tokenbench-baseline-"));
    const [owner, name] = g.repository.split("/") as [string, string];
    let doc: ResultDocument;
    try {
      await (
        g.download ??
        (async (id, runId, path) => {
          await new DefaultArtifactClient().downloadArtifact(id, {
            path,
            findBy: { token: g.token, workflowRunId: runId, repositoryOwner: owner, repositoryName: name },
          });
        })
      )(art.id, run.id, dir);
      doc = readResultsDocument(join(dir, "results.json"));
    } finally {
      rmSync(dir, { recursive: true, force: true }); // read whole; a self-hosted runner keeps its temp
    }
    return {
      doc,
      source: `the ${g.artifactName} artifact of run ${run.id} on ${branch}${run.head_sha ? ` (${run.head_sha.slice(0, 7)})` : ""}`,
    };
  }
  throw new BaselineError(
    `no successful run of ${g.workflow ?? "this workflow"} on ${branch} with a ${g.artifactName} artifact among the last ${runs?.length ?? 0}${skipped > 0 ? ` (${skipped} left out: not a push or schedule of ${g.repository}'s own ${branch}, such as a pull request's run)` : ""}: push to ${branch} once with this workflow to make one`,
  );
}

/** `baseline: path/to/results.json` or `baseline: artifact`. */
export async function loadBaseline(
  spec: string,
  branch: string | null,
  g: BaselineGitHub | null,
): Promise<Baseline> {
  if (spec.trim() !== "artifact") {
    const path = insideOrRefuse(workspace(), spec.trim(), 'input "baseline":');
    return { doc: readResultsDocument(path), source: `the file ${spec.trim()}` };
  }
  if (g === null) throw new BaselineError("baseline: artifact needs github-token (with actions: read)");
  if (branch === null)
    throw new BaselineError("baseline: artifact needs a base branch (a pull request, or the default branch)");
  return artifactBaseline(g, branch);
}
