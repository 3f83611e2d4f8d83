/**
 * A document judged against the base branch: by the results service (upload, then its compare
 * endpoint), else by the `baseline` input (a file or the base branch's artifact) judged as the
 * service judges. Each returns the rows with what the comment needs; a comparison that could
 * fail the step but cannot be had fails it (ActionFailure).
 */
import * as core from "@actions/core";
import { fetchCompare, uploadResults } from "../core/documents/publish.ts";
import { TokenbenchError } from "../schema/errors.ts";
import type { ResultDocument } from "../schema/v1.ts";
import { compareDocuments, workloadText } from "../shared/comparison.ts";
import { canFail, type FailOn, parseGate, parseRules } from "../shared/rules.ts";
import type { VerdictSummary } from "../shared/verdict.ts";
import { type Baseline, loadBaseline } from "./baseline.ts";
import type { Payload, RunContext } from "./context.ts";
import { fail } from "./failure.ts";
import type { ActionInputs } from "./inputs.ts";

/** The engine's verdict for one document, and what it was judged against (for the comment's words). */
export interface Verdict {
  summary: VerdictSummary;
  baseBranch: string;
  /** "the file base.json", "main": how the evidence line names the base. */
  baseName: string;
  /** A base that is no branch's history (a file, an artifact): the comment says it, not the branch. */
  baseText?: string;
}

export interface ServiceOutcome {
  /** The run's page on the service, when the upload went through. */
  runUrl: string | null;
  /** The service's image of the run's frontier over the base branch's (a run with a frontier). */
  frontierUrl?: string | null;
  verdict: Verdict | null;
  /** Why there is no verdict, in the words the log's warning used (for the comment and summary). */
  why: string | null;
}

/** A baseline file's verdict, or why there is none. */
export interface FileOutcome {
  verdict: Verdict | null;
  why: string | null;
}

async function credentials(inputs: ActionInputs): Promise<string | null> {
  if (process.env.ACTIONS_ID_TOKEN_REQUEST_URL && process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN) {
    try {
      // The runner's token service gets a deadline too: a hung one must not hold the job.
      let timer: NodeJS.Timeout | undefined;
      const token = await Promise.race([
        core.getIDToken(inputs.audience),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("timed out after 30 s")), 30_000);
        }),
      ]).finally(() => clearTimeout(timer));
      return token;
    } catch (err) {
      core.warning(`could not get an OIDC token (${(err as Error).message}); trying the api-token input`);
    }
  }
  return inputs.apiToken;
}

/** A comparison that could not be had: a warning, or the step's failure when its verdict could fail the step. */
function withoutVerdict(msg: string, failOn: FailOn, inputs: ActionInputs): string {
  if (canFail(parseGate(inputs.gate, parseRules(inputs.thresholds)), failOn))
    fail(`${msg} (fail-on: ${failOn} cannot be decided without it)`);
  core.warning(msg);
  return msg;
}

/** Upload to `results-url`, then the service's compare against the base branch. */
export async function serviceVerdict(
  inputs: ActionInputs & { resultsUrl: string },
  ctx: RunContext,
  doc: ResultDocument,
  failOn: FailOn,
): Promise<ServiceOutcome> {
  const token = await credentials(inputs);
  if (token === null) {
    const why = "results-url is set but there is no credential: grant `id-token: write` or pass api-token";
    core.warning(why);
    return { runUrl: null, verdict: null, why };
  }
  if (ctx.repository === null) {
    const why = "GITHUB_REPOSITORY is not set: cannot upload";
    core.warning(why);
    return { runUrl: null, verdict: null, why };
  }
  const up = await uploadResults(inputs.resultsUrl, doc, token);
  if (!up.ok) {
    const msg = `upload to ${inputs.resultsUrl} failed after ${up.attempts} attempt(s): ${up.error} (the results are in the artifact)`;
    if (inputs.failOnUploadError) fail(msg);
    core.warning(msg);
    return { runUrl: null, verdict: null, why: msg };
  }
  core.info(`uploaded: ${up.created ? "new run" : "already stored"} ${up.runId}`);
  const res = await fetchCompare(
    inputs.resultsUrl,
    ctx.repository,
    up.runId!,
    doc.git?.base_branch ?? ctx.git.base_branch,
    inputs.readToken,
    fetch,
    30_000,
    { thresholds: inputs.thresholds, gate: inputs.gate, fwer: inputs.gateFwer, failOn },
  );
  if (!res.ok) {
    const why = withoutVerdict(`compare against the base branch failed: ${res.error}`, failOn, inputs);
    return { runUrl: up.runUrl, verdict: null, why };
  }
  const cmp = res.compare;
  return {
    runUrl: up.runUrl,
    frontierUrl: doc.frontier ? `${inputs.resultsUrl}/api/v1/runs/${up.runId}/frontier.svg` : null,
    verdict: {
      summary: cmp,
      baseBranch: cmp.base_branch,
      baseName: cmp.base_name,
    },
    why: null,
  };
}

/** The `baseline` input (loaded once for all documents, kept in `cache`), judged as the service judges. */
export async function fileVerdict(
  inputs: ActionInputs & { baseline: string },
  ctx: RunContext,
  payload: Payload | null,
  doc: ResultDocument,
  failOn: FailOn,
  cache: { baseline: Baseline | null },
): Promise<FileOutcome> {
  const branch = doc.git?.base_branch ?? ctx.git.base_branch ?? payload?.repository?.default_branch ?? null;
  try {
    cache.baseline ??= await loadBaseline(
      inputs.baseline,
      branch,
      inputs.githubToken && ctx.repository
        ? {
            apiUrl: ctx.apiUrl,
            token: inputs.githubToken,
            repository: ctx.repository,
            workflow: process.env.GITHUB_WORKFLOW ?? null,
            artifactName: inputs.artifactName,
          }
        : null,
    );
    const base = cache.baseline;
    const summary = compareDocuments(
      [{ id: base.source, doc: base.doc }],
      { id: "head", doc },
      {
        rules: parseRules(inputs.thresholds),
        gate: inputs.gate,
        fwerPct: inputs.gateFwer,
      },
    );
    for (const o of summary.other_workloads)
      core.warning(
        `the baseline (${base.source}) measured another workload (${workloadText(o.fields)}): it is no baseline for this run; compare like with like`,
      );
    core.info(`compared against ${base.source}`);
    return {
      verdict: { summary, baseBranch: branch ?? "baseline", baseName: base.source, baseText: base.source },
      why: null,
    };
  } catch (err) {
    const code = err instanceof TokenbenchError ? `[${err.code}] ` : "";
    return {
      verdict: null,
      why: withoutVerdict(`baseline: ${code}${(err as Error).message}`, failOn, inputs),
    };
  }
}
