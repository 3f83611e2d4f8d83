/**
 * `tokenbench upload results.json --url URL --token T`: a CLI run into the results service, by
 * the Action's own upload (the per-request samples go, the records stay in the file). What the
 * service needs to place the run (repository, branch, commit) comes from the flags, else the
 * document, else the git checkout the command runs in.
 */
import { readCheckout } from "../core/documents/git-checkout.ts";
import { uploadResults } from "../core/documents/publish.ts";
import { UPLOAD } from "../core/settings/upload-table.ts";
import { TokenbenchError, UsageError } from "../schema/errors.ts";
import { canonicalRepository } from "../schema/upload.ts";
import type { ResultDocument } from "../schema/v1.ts";
import { describeTestbed } from "../shared/testbed.ts";
import { parseCommand } from "./command.ts";
import { loadDoc } from "./document-commands.ts";

export async function uploadCommand(argv: string[]): Promise<number> {
  const p = parseCommand(
    argv,
    UPLOAD,
    "tokenbench upload results.json --url URL --token TOKEN: store a run in the results service (its trends, badges and the PR page); the repository, branch and commit default to the git checkout's",
  );
  if (p === null) return 0;
  const v = p.values;
  if (p.positionals.length !== 1)
    throw new UsageError(
      `upload takes one results file, got ${p.positionals.length}: tokenbench upload results.json --url URL --token TOKEN`,
    );
  if (v.url === null)
    throw new UsageError("--url is required: the results service's URL (the Action's results-url)", "--url");
  if (v.token === null)
    throw new UsageError(
      "--token (or TOKENBENCH_API_TOKEN) is required: the repository's API token for the service (docs/service.md says how to make one)",
      "--token",
    );
  const path = p.positionals[0]!;
  const doc = loadDoc(path, "results file");
  const checkout = readCheckout(process.cwd());
  const repository = v.repository ?? doc.repository ?? checkout.repository;
  if (repository === null)
    throw new UsageError(
      "no repository: the document names none and this directory is not a checkout with a GitHub origin remote; pass --repository OWNER/NAME",
      "--repository",
    );
  if (canonicalRepository(repository) === null)
    throw new UsageError(
      `--repository ${JSON.stringify(repository)} is not a GitHub OWNER/NAME`,
      "--repository",
    );
  const was = doc.git ?? null;
  const branch = v.branch ?? was?.branch ?? checkout.branch;
  if (branch === null)
    throw new UsageError(
      "no branch: the document names none and the checkout is on a detached HEAD; pass --branch NAME (trends and badges are per branch)",
      "--branch",
    );
  const git: NonNullable<ResultDocument["git"]> = {
    sha: v.sha ?? was?.sha ?? checkout.sha,
    ref: was?.ref ?? (v.pr !== null ? `refs/pull/${v.pr}/merge` : `refs/heads/${branch}`),
    branch,
    base_branch: v.baseBranch ?? was?.base_branch ?? null,
    pr_number: v.pr ?? was?.pr_number ?? null,
    workflow_run_id: was?.workflow_run_id ?? null,
    run_attempt: was?.run_attempt ?? null,
  };
  const placed: ResultDocument = { ...doc, repository, git };
  if (v.testbed !== null)
    placed.testbed = describeTestbed(placed, {
      name: v.testbed,
      engine_flags: doc.testbed?.engine_flags ?? null,
    });
  const r = await uploadResults(v.url.replace(/\/+$/, ""), placed, v.token);
  if (!r.ok)
    throw new TokenbenchError(
      "upload_failed",
      `${path} was not stored by ${v.url} (${r.attempts} attempt${r.attempts === 1 ? "" : "s"}): ${r.error}; the file is unchanged: check --url and --token, then run tokenbench upload again`,
    );
  const where = `${repository} ${branch}${git.pr_number !== null ? ` (PR #${git.pr_number})` : ""}${git.sha ? ` at ${git.sha.slice(0, 7)}` : ""}`;
  process.stdout.write(
    `${r.created ? "stored" : "already stored"}: ${path} as run ${r.runId} of ${where}${r.runUrl ? `: ${r.runUrl}` : ""}\n`,
  );
  return 0;
}
