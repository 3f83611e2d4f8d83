/** Keeping the raw results: the run's artifact (on a runner), or a notice that they stay in the workspace. */
import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { DefaultArtifactClient } from "@actions/artifact";
import * as core from "@actions/core";

/** The slice of @actions/artifact the Action uses (injectable for tests). */
export interface ArtifactUploader {
  uploadArtifact(
    name: string,
    files: string[],
    rootDirectory: string,
    options?: { retentionDays?: number },
  ): Promise<{ id?: number }>;
}

export async function uploadArtifact(
  name: string,
  dir: string,
  env: Record<string, string | undefined> = process.env,
  client: ArtifactUploader | null = null,
): Promise<{ id: number | null; url: string | null }> {
  if (!env.ACTIONS_RUNTIME_TOKEN) {
    core.notice(
      "not on a GitHub runner (no ACTIONS_RUNTIME_TOKEN): raw results stay in the workspace, no artifact uploaded",
    );
    return { id: null, url: null };
  }
  const files = readdirSync(dir).map((f) => resolve(dir, f));
  const r = await (client ?? new DefaultArtifactClient()).uploadArtifact(name, files, resolve(dir), {
    retentionDays: 30,
  });
  const repo = env.GITHUB_REPOSITORY;
  const runId = env.GITHUB_RUN_ID;
  const server = env.GITHUB_SERVER_URL ?? "https://github.com";
  return {
    id: r.id ?? null,
    url: r.id && repo && runId ? `${server}/${repo}/actions/runs/${runId}/artifacts/${r.id}` : null,
  };
}
