/**
 * The GitHub Action: start (optionally) and wait for the server, run the sweep (and profile),
 * keep raw results as an artifact, upload to the results service, compare against the base
 * branch, write the job summary and a sticky PR comment. `main` is the steps in order; a step
 * that fails the job throws why (failure.ts), and index.ts fails the step once.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import * as core from "@actions/core";
import { recentChangePoints } from "../core/documents/publish.ts";
import { logTail, stopServer } from "../core/server/server-process.ts";
import type { ResultDocument } from "../schema/v1.ts";
import { frontierSvg } from "../shared/frontier-svg.ts";
import { benchmarkName } from "../shared/measures.ts";
import { DEFAULT_FAIL_ON, type FailOn } from "../shared/rules.ts";
import { testbedDisplayName, testbedSpec } from "../shared/testbed.ts";
import { summaryFails, type VerdictSummary } from "../shared/verdict.ts";
import { failureLine } from "../shared/verdict-text.ts";
import { uploadArtifact } from "./artifact.ts";
import { benchmarkSet, GitHubError, renderComment, stickyMarker, upsertStickyComment } from "./comment.ts";
import { type Payload, type RunContext, runContext } from "./context.ts";
import { fail } from "./failure.ts";
import { type ActionInputs, readInputs, verdictRulesOf } from "./inputs.ts";
import { measure } from "./measure.ts";
import { type Docs, mergedDocs, publishedDocs } from "./modes.ts";
import { masked, maskSecrets, secretInputs } from "./secrets.ts";
import { fileVerdict, serviceVerdict, type Verdict } from "./verdicts.ts";

type Artifact = { id: number | null; url: string | null };

/** What the documents came to, across the loop over them. */
interface Outcome {
  markdowns: string[];
  changeNotes: string[];
  summaries: VerdictSummary[];
  regressions: number;
  firstRunUrl: string | null;
}

/** The documents of this run: published (workflow_run), merged (shards) or measured here. */
function documents(inputs: ActionInputs, ctx: RunContext, payload: Payload | null): Promise<Docs> {
  const rules = verdictRulesOf(inputs);
  if (inputs.publishResults !== null)
    return publishedDocs(inputs, inputs.publishResults, ctx, payload, rules);
  if (inputs.mergeResults !== null)
    return Promise.resolve(
      mergedDocs(inputs.mergeResults, ctx, inputs.resultsDir, rules, inputs.mergeClockToleranceMs),
    );
  return measure(inputs, ctx);
}

/** Each run's frontier as an image beside its results (the comment points to it without a service). */
function keepFrontierImages(inputs: ActionInputs, docs: Docs): void {
  for (const { doc, path } of docs) {
    if (!doc.frontier) continue;
    const name = docs.length === 1 ? "frontier.svg" : `${basename(path, ".json")}.frontier.svg`;
    writeFileSync(join(inputs.resultsDir, name), frontierSvg({ label: "this run", frontier: doc.frontier }));
  }
}

async function keepArtifact(inputs: ActionInputs): Promise<Artifact> {
  return uploadArtifact(inputs.artifactName, inputs.resultsDir).catch((err: unknown) => {
    core.warning(`artifact upload failed: ${(err as Error).message}`);
    return { id: null, url: null };
  });
}

/** Shard mode: one part of a run is not a result; the merge job publishes the whole. */
async function keepShard(inputs: ActionInputs, docs: Docs): Promise<void> {
  const artifact = await keepArtifact(inputs);
  core.notice(
    `shard ${inputs.shard}: results kept${artifact.url ? ` in the artifact (${artifact.url})` : ` in ${inputs.resultsDir}`} for the merge job (merge-results); nothing uploaded or commented`,
  );
  core.setOutput("results-path", docs[0]?.path ?? "");
}

/** A push to the default branch: say when the branch's own history has a new segment. */
async function changePointNote(
  inputs: ActionInputs,
  ctx: RunContext,
  payload: Payload | null,
  doc: ResultDocument,
): Promise<string | null> {
  const branch = doc.git?.branch;
  const isDefault = branch && branch === (payload?.repository?.default_branch ?? "main");
  if (!inputs.resultsUrl || !ctx.repository || ctx.eventName !== "push" || !isDefault) return null;
  if (doc.kind !== "sweep" || doc.levels.length === 0) return null;
  const top = doc.levels[doc.levels.length - 1]!;
  const cps = await recentChangePoints(
    inputs.resultsUrl,
    ctx.repository,
    branch,
    [
      { benchmark: benchmarkName(top), measure: "output_tok_s", label: "output tok/s" },
      { benchmark: benchmarkName(top), measure: "ttft_p95_ms", label: "TTFT p95" },
    ],
    inputs.readToken,
  );
  return cps.length > 0 ? `#### Change points on ${branch}\n\n${cps.join("\n")}` : null;
}

/** The sticky PR comment, where there is a PR and a token that may write it. */
async function commentOnPullRequest(
  inputs: ActionInputs,
  ctx: RunContext,
  doc: ResultDocument,
  testbed: string,
  md: string,
): Promise<void> {
  const prNumber = doc.git?.pr_number ?? null;
  if (prNumber === null || !inputs.comment) return;
  if (ctx.isFork && ctx.eventName === "pull_request") {
    core.notice(
      "pull request from a fork: its token cannot comment. Use the two-stage pull_request -> workflow_run pattern (docs/action.md, Pull requests from forks) to comment.",
    );
    return;
  }
  if (!inputs.githubToken || ctx.repository === null) {
    core.notice("no github-token: skipping the PR comment");
    return;
  }
  try {
    const r = await upsertStickyComment(
      { apiUrl: ctx.apiUrl, token: inputs.githubToken, repository: ctx.repository },
      prNumber,
      stickyMarker(testbed, benchmarkSet(doc)),
      md,
    );
    core.info(`PR comment ${r.action} (${r.id})`);
  } catch (err) {
    if (err instanceof GitHubError && (err.status === 403 || err.status === 404)) {
      core.notice(`cannot comment on the PR with this token (HTTP ${err.status}); skipping. ${err.message}`);
    } else core.warning(`PR comment failed: ${(err as Error).message}`);
  }
}

/** Each document: judged (service, else baseline file), commented, summarised. */
async function judgeAll(
  inputs: ActionInputs,
  ctx: RunContext,
  payload: Payload | null,
  docs: Docs,
  artifact: Artifact,
  failOn: FailOn,
): Promise<Outcome> {
  const out: Outcome = { markdowns: [], changeNotes: [], summaries: [], regressions: 0, firstRunUrl: null };
  const cache = { baseline: null };
  for (const { doc } of docs) {
    const service = inputs.resultsUrl
      ? await serviceVerdict({ ...inputs, resultsUrl: inputs.resultsUrl }, ctx, doc, failOn)
      : null;
    let verdict: Verdict | null = service?.verdict ?? null;
    const why: string[] = service?.why ? [service.why] : [];
    // No service (or it did not compare): the baseline input, judged as the service judges.
    if (verdict === null && inputs.baseline !== null) {
      const v = await fileVerdict({ ...inputs, baseline: inputs.baseline }, ctx, payload, doc, failOn, cache);
      verdict = v.verdict;
      if (v.why) why.push(v.why);
    }
    const runUrl = service?.runUrl ?? null;
    out.firstRunUrl ??= runUrl;
    if (verdict !== null) {
      out.regressions += verdict.summary.counts.regressed;
      out.summaries.push(verdict.summary);
    }
    const note = await changePointNote(inputs, ctx, payload, doc);
    if (note !== null) out.changeNotes.push(masked(note));
    const testbed = testbedDisplayName(doc, testbedSpec(doc));
    const md = masked(
      renderComment({
        doc,
        testbed,
        verdict,
        noVerdict: verdict === null && why.length > 0 ? why.join("; ") : null,
        baseBranch: verdict?.baseBranch ?? doc.git?.base_branch ?? ctx.git.base_branch ?? "main",
        baseText: verdict?.baseText ?? null,
        links: {
          run: ctx.runUrl,
          dashboard: runUrl ?? inputs.dashboardUrl,
          artifact: artifact.url,
          frontier: service?.frontierUrl ?? null,
        },
      }),
    );
    out.markdowns.push(md);
    await commentOnPullRequest(inputs, ctx, doc, testbed, md);
  }
  return out;
}

/** The job summary and the outputs, then the job's own verdict (fail-on, max-error-rate): a failure thrown once. */
async function finish(inputs: ActionInputs, docs: Docs, out: Outcome, failOn: FailOn): Promise<void> {
  const markdown = out.markdowns.join("\n\n---\n\n");
  await core.summary.addRaw([markdown, ...out.changeNotes].join("\n\n"), true).write();
  core.setOutput("results-path", docs[0]?.path ?? "");
  core.setOutput("run-url", out.firstRunUrl ?? "");
  core.setOutput("regression-count", String(out.regressions));
  core.setOutput("markdown", markdown);
  const failures: string[] = [];
  const failing = out.summaries.filter((s) => summaryFails(s, failOn));
  if (failing.length > 0) {
    failures.push(failureLine(failing[0]!, failOn));
  }
  const over = docs.flatMap(({ doc }) =>
    doc.levels.filter((l) => l.requests > 0 && (100 * l.errors) / l.requests > inputs.maxErrorRate),
  );
  if (over.length > 0)
    failures.push(
      `more than ${inputs.maxErrorRate}% of requests failed at ${over.map((l) => `level ${l.level} (${l.errors} of ${l.requests})`).join(", ")}; the results were kept (input max-error-rate)`,
    );
  if (failures.length > 0) fail(failures.join("\n"));
}

export async function main(): Promise<void> {
  // before anything can print one: a bad input's message, a server's echo, a service's error body
  maskSecrets(secretInputs((n) => core.getInput(n)));
  const inputs = readInputs((n) => core.getInput(n));
  const payloadPath = process.env.GITHUB_EVENT_PATH;
  const payload: Payload | null =
    payloadPath && existsSync(payloadPath) ? JSON.parse(readFileSync(payloadPath, "utf8")) : null;
  const ctx = runContext(process.env, payload);
  const docs = await documents(inputs, ctx, payload);
  if (inputs.shard !== null) return keepShard(inputs, docs);
  const measured = inputs.publishResults === null && inputs.mergeResults === null;
  if (measured) keepFrontierImages(inputs, docs);
  const artifact: Artifact = measured ? await keepArtifact(inputs) : { id: null, url: null }; // the measuring jobs already uploaded their artifacts
  const failOn: FailOn = inputs.failOn ?? (inputs.failOnRegression ? "warning" : DEFAULT_FAIL_ON);
  await finish(inputs, docs, await judgeAll(inputs, ctx, payload, docs, artifact, failOn), failOn);
}

export async function post(): Promise<void> {
  maskSecrets(secretInputs((n) => core.getInput(n))); // the server's log tail may print one
  const pid = Number(core.getState("server-pid"));
  if (!pid) return;
  const how = await stopServer(pid);
  core.info(`inference server (pid ${pid}) ${how}`);
  const log = core.getState("server-log");
  if (log) core.info(`server log tail:\n${logTail(log, 60)}`);
}

export { uploadArtifact } from "./artifact.ts";
