/**
 * The Action's two modes that measure nothing: publish-results (a trusted workflow_run job
 * publishes what an untrusted job measured) and merge-results (a matrix's shards as one run).
 * Each returns the documents to publish, or null after failing the step with the reason.
 */
import { join } from "node:path";
import * as core from "@actions/core";
import { mergeShards } from "../core/documents/merge.ts";
import {
  assertWritable,
  insideOrRefuse,
  readResults,
  refuseOverwrite,
  writeResults,
} from "../core/results/files.ts";
import { markdownReport } from "../core/results/report.ts";
import { readRegularFile } from "../core/workload/regular-file.ts";
import { TokenbenchError } from "../schema/errors.ts";
import { uploadIssues } from "../schema/upload.ts";
import { parseResultDocument, type ResultDocument } from "../schema/v1.ts";
import { findForkPullRequest, type Payload, type RunContext, workspace } from "./context.ts";
import { fail } from "./failure.ts";

export type Docs = { doc: ResultDocument; path: string }[];

const list = (s: string) =>
  s
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);

/**
 * The artifact supplies measurements only; where the results belong (repository, PR, branch,
 * commit, run) comes from the trusted event and the GitHub API, and the rules they are judged
 * with from this job's inputs, never from the artifact.
 */
export async function publishedDocs(
  inputs: { githubToken: string | null },
  files: string,
  ctx: RunContext,
  payload: Payload | null,
  rules: ResultDocument["verdict_rules"],
): Promise<Docs> {
  const git = { ...ctx.git };
  if (git.pr_number === null && inputs.githubToken && ctx.repository) {
    const pr = await findForkPullRequest(
      { apiUrl: ctx.apiUrl, token: inputs.githubToken, repository: ctx.repository },
      payload,
      (m) =>
        core.warning(
          `could not look up the pull request of this workflow_run: ${m}; published without a PR number (no comment)`,
        ),
    );
    if (pr) {
      git.pr_number = pr.number;
      git.base_branch = pr.base ?? git.base_branch;
    }
  }
  const docs: Docs = [];
  for (const path of list(files)) {
    let doc: ResultDocument;
    try {
      const inside = insideOrRefuse(workspace(), path, "the file");
      doc = parseResultDocument(
        JSON.parse(readRegularFile(inside, (detail) => new Error(detail)).toString("utf8")),
      );
    } catch (err) {
      fail(`input "publish-results": ${path}: ${(err as Error).message}`);
    }
    // Where it belongs and how it is judged come from this trusted job, never from the artifact.
    const trusted: ResultDocument = { ...doc, repository: ctx.repository, git, verdict_rules: rules };
    const problems = uploadIssues(trusted, Date.now());
    if (problems.length > 0)
      fail(
        `input "publish-results": ${path} is refused: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
      );
    docs.push({ doc: trusted, path });
  }
  return docs;
}

/** The shards of one run (a matrix's shard jobs, same workflow run) as one document in `dir`. */
export function mergedDocs(
  files: string,
  ctx: RunContext,
  dir: string,
  rules: ResultDocument["verdict_rules"],
  toleranceMs?: number,
): Docs {
  try {
    const shards = list(files).map((path) => ({
      path,
      ...readResults(insideOrRefuse(workspace(), path, 'input "merge-results":')),
    }));
    const out = join(dir, "results.json");
    refuseOverwrite(out, shards, 'download the shards outside "results-dir", or set another "results-dir"');
    const merged = mergeShards(shards, toleranceMs === undefined ? {} : { toleranceMs });
    assertWritable(out);
    const doc: ResultDocument = {
      ...merged.doc,
      repository: ctx.repository,
      git: ctx.git,
      verdict_rules: rules,
    };
    writeResults(doc, out, merged.records, "inline");
    core.info(`merged ${shards.length} shards (${merged.records.length} requests) into ${out}`);
    core.info(markdownReport(doc));
    return [{ doc, path: out }];
  } catch (err) {
    const code = err instanceof TokenbenchError ? `[${err.code}] ` : "";
    fail(`input "merge-results": ${code}${(err as Error).message}`);
  }
}
