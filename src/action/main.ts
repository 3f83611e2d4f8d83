/**
 * The GitHub Action: start (optionally) and wait for the server, run the sweep (and profile),
 * keep raw results as an artifact, upload to the results service, compare against the base
 * branch, write the job summary and a sticky PR comment.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as core from "@actions/core";
import { loadGeneratorOf, runSaltOf } from "../core/load/load-generator.ts";
import { runProfile } from "../core/profile/profile.ts";
import type { Provenance } from "../core/results/document.ts";
import { probeGpu } from "../core/results/environment.ts";
import { assertWritable, writeResults } from "../core/results/files.ts";
import { markdownReport } from "../core/results/report.ts";
import { type Preflight, preflight } from "../core/server/preflight.ts";
import { makeTarget } from "../core/server/target.ts";
import { profileConfigOf } from "../core/settings/table.ts";
import { runSweep } from "../core/sweep/sweep.ts";
import { type Dataset, loadDataset } from "../core/workload/dataset.ts";
import { loadTrace, traceReplay } from "../core/workload/trace.ts";
import { TokenbenchError } from "../schema/errors.ts";
import type { ResultDocument } from "../schema/v1.ts";
import { compareRows } from "../shared/compare.ts";
import { benchmarkName, documentPoints } from "../shared/measures.ts";
import { type FailOn, fails, parseRules, type Severity } from "../shared/rules.ts";
import { DEFAULT_THRESHOLDS } from "../shared/statistics.ts";
import { testbedDisplayName, testbedSpec } from "../shared/testbed.ts";
import { workloadDiff } from "../shared/workload.ts";
import { uploadArtifact } from "./artifact.ts";
import { type Baseline, loadBaseline } from "./baseline.ts";
import { benchmarkSet, GitHubError, renderComment, stickyMarker, upsertStickyComment } from "./comment.ts";
import { type Payload, runContext } from "./context.ts";
import { type ActionInputs, InputError, readInputs } from "./inputs.ts";
import { mergedDocs, publishedDocs } from "./modes.ts";
import { fetchCompare, recentChangePoints, uploadResults } from "./publish.ts";
import { logTail, type StartedServer, startServer, stopServer } from "./server-process.ts";

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

async function measure(
  inputs: ActionInputs,
  ctx: ReturnType<typeof runContext>,
  docs: { doc: ResultDocument; path: string }[],
): Promise<boolean> {
  const dir = inputs.resultsDir;
  try {
    assertWritable(join(dir, "results.json"));
  } catch (err) {
    core.setFailed(`[out_unwritable] ${(err as Error).message.replace("--out", "results-dir")}`);
    return false;
  }
  let target = makeTarget(inputs);
  let dataset: Dataset | null = null;
  if (inputs.dataset !== null) {
    try {
      dataset = loadDataset(inputs.dataset);
    } catch (err) {
      core.setFailed(`input "dataset": ${(err as Error).message}`);
      return false;
    }
    inputs.sweep.dataset = { name: dataset.name, lines: dataset.lines, sha256: dataset.sha256 };
  }
  let replay: ReturnType<typeof traceReplay> | null = null;
  if (inputs.trace !== null) {
    try {
      replay = traceReplay(loadTrace(inputs.trace), inputs.sweep, inputs.traceSpeed, inputs.requests);
    } catch (err) {
      core.setFailed(`input "trace": ${(err as Error).message}`);
      return false;
    }
  }
  let started: StartedServer | null = null;
  if (inputs.serverCommand) {
    const log = resolve(dir, "server.log");
    started = startServer(inputs.serverCommand, log);
    core.saveState("server-pid", String(started.pid));
    core.saveState("server-log", log);
    core.info(`started the inference server (pid ${started.pid}); log: ${log}`);
  }
  const load = loadGeneratorOf(inputs, inputs.sweep, target);
  const salt = runSaltOf(load);
  let pre: Preflight;
  try {
    pre = await preflight(target, inputs.sweep, {
      readyTimeoutS: inputs.readyTimeoutS,
      serverLimits: inputs.serverLimits,
      calibrate: inputs.calibratePrompts,
      onNotice: (m) => core.info(`notice: ${m}`),
      ...(started ? { serverExited: started.exited } : {}),
      ...(replay ? { longest: replay.longest } : {}),
    });
    target = pre.target;
    // a trace's prompts are sized once the server's token count is known
    if (replay) dataset = replay.build(pre.calibration, salt);
    const r = pre.readiness;
    core.info(
      `server ready after ${r.waited_s.toFixed(1)} s: ${r.probes.join("; ")} (model ${target.model})`,
    );
  } catch (err) {
    const tail = inputs.serverCommand ? logTail(resolve(dir, "server.log")) : "";
    const code = err instanceof TokenbenchError ? `[${err.code}] ` : "";
    core.setFailed(`${code}${(err as Error).message}${tail ? `\nserver log (last lines):\n${tail}` : ""}`);
    return false;
  }
  if ((await probeGpu()) === null) core.info("nvidia-smi not found: GPU recorded as unknown");
  // Provenance goes into the documents as they are written: nothing is rewritten afterwards.
  const provenance: Provenance = {
    repository: ctx.repository,
    git: ctx.git,
    testbed: { name: inputs.testbed, engine_flags: inputs.serverCommand },
    runnerName: ctx.runnerName,
  };

  await core.group("sweep", async () => {
    const path = join(dir, "results.json");
    const doc = await runSweep({
      target,
      server: pre.server,
      promptCalibration: pre.calibration,
      config: inputs.sweep,
      out: path,
      records: "inline",
      resume: false,
      provenance,
      serverLimits: inputs.serverLimits,
      onNotice: (m) => core.info(`notice: ${m}`),
      load,
      salt,
      dataset,
    });
    docs.push({ doc, path });
    core.info(markdownReport(doc));
  });
  if (inputs.profile) {
    await core.group("profile", async () => {
      const doc = await runProfile({
        target,
        timeoutS: inputs.timeoutS,
        serverLimits: inputs.serverLimits,
        provenance,
        config: profileConfigOf(inputs, inputs),
      });
      const path = join(dir, "profile.json");
      writeResults(doc, path, doc.requests ?? [], "inline");
      docs.push({ doc, path });
    });
  }

  return true;
}

export async function main(): Promise<void> {
  let inputs: ActionInputs;
  try {
    inputs = readInputs((n) => core.getInput(n));
  } catch (err) {
    if (err instanceof InputError) {
      core.setFailed(err.message);
      return;
    }
    throw err;
  }
  const payloadPath = process.env.GITHUB_EVENT_PATH;
  const payload: Payload | null =
    payloadPath && existsSync(payloadPath) ? JSON.parse(readFileSync(payloadPath, "utf8")) : null;
  const ctx = runContext(process.env, payload);
  const dir = inputs.resultsDir;

  const docs: { doc: ResultDocument; path: string }[] = [];
  if (inputs.publishResults !== null) {
    const got = await publishedDocs(inputs, inputs.publishResults, ctx, payload);
    if (got === null) return;
    docs.push(...got);
  } else if (inputs.mergeResults !== null) {
    const got = mergedDocs(inputs.mergeResults, ctx, dir, inputs.mergeClockToleranceMs);
    if (got === null) return;
    docs.push(...got);
  } else {
    const ok = await measure(inputs, ctx, docs);
    if (!ok) return;
  }
  if (inputs.shard !== null) {
    // Shard mode: one part of a run is not a result; the merge job publishes the whole.
    const artifact = await uploadArtifact(inputs.artifactName, dir).catch((err: unknown) => {
      core.warning(`artifact upload failed: ${(err as Error).message}`);
      return { id: null, url: null };
    });
    core.notice(
      `shard ${inputs.shard}: results kept${artifact.url ? ` in the artifact (${artifact.url})` : ` in ${dir}`} for the merge job (merge-results); nothing uploaded or commented`,
    );
    core.setOutput("results-path", docs[0]?.path ?? "");
    return;
  }

  const artifact =
    inputs.publishResults !== null || inputs.mergeResults !== null
      ? { id: null, url: null } // the measuring jobs already uploaded their artifacts
      : await uploadArtifact(inputs.artifactName, dir).catch((err: unknown) => {
          core.warning(`artifact upload failed: ${(err as Error).message}`);
          return { id: null, url: null };
        });

  const markdowns: string[] = [];
  const changeNotes: string[] = [];
  let baselineDoc: Baseline | null = null;
  let regressions = 0;
  const failOn: FailOn = inputs.failOn ?? (inputs.failOnRegression ? "warning" : "never");
  const severities: Severity[] = [];
  let firstRunUrl: string | null = null;
  for (const { doc } of docs) {
    let rows = null;
    let baselineRuns = 0;
    let baseBranch = doc.git?.base_branch ?? ctx.git.base_branch ?? "main";
    let runUrl: string | null = null;
    let rulesText: string | null = inputs.thresholds;
    if (inputs.resultsUrl) {
      const token = await credentials(inputs);
      if (token === null) {
        core.warning(
          "results-url is set but there is no credential: grant `id-token: write` or pass api-token",
        );
      } else if (ctx.repository === null) {
        core.warning("GITHUB_REPOSITORY is not set: cannot upload");
      } else {
        const up = await uploadResults(inputs.resultsUrl, doc, token);
        if (!up.ok) {
          const msg = `upload to ${inputs.resultsUrl} failed after ${up.attempts} attempt(s): ${up.error} (the results are in the artifact)`;
          if (inputs.failOnUploadError) {
            core.setFailed(msg);
            return;
          }
          core.warning(msg);
        } else {
          runUrl = up.runUrl;
          firstRunUrl ??= runUrl;
          core.info(`uploaded: ${up.created ? "new run" : "already stored"} ${up.runId}`);
          const res = await fetchCompare(
            inputs.resultsUrl,
            ctx.repository,
            up.runId!,
            doc.git?.base_branch ?? ctx.git.base_branch,
            inputs.readToken,
            fetch,
            30_000,
            { thresholds: inputs.thresholds, failOn },
          );
          if (res.ok) {
            const cmp = res.compare;
            rows = cmp.rows;
            baselineRuns = cmp.baseline_runs.length;
            baseBranch = cmp.base_branch;
            rulesText = cmp.rules ?? rulesText;
            regressions += cmp.rows.filter((r) => r.verdict === "regressed").length;
            severities.push(...cmp.rows.map((r) => r.severity));
          } else {
            const msg = `compare against the base branch failed: ${res.error}`;
            if (failOn !== "never") {
              core.setFailed(`${msg} (fail-on: ${failOn} cannot be decided without it)`);
              return;
            }
            core.warning(msg);
          }
        }
      }
    }
    // No service (or it did not compare): the baseline input, judged as the service judges.
    if (rows === null && inputs.baseline !== null) {
      const branch =
        doc.git?.base_branch ?? ctx.git.base_branch ?? payload?.repository?.default_branch ?? null;
      try {
        baselineDoc ??= await loadBaseline(
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
        const differ = workloadDiff(baselineDoc.doc, doc);
        if (differ.length > 0) {
          core.setFailed(
            `the baseline (${baselineDoc.source}) measured a different workload: ${differ.map((d) => `${d.field} ${JSON.stringify(d.a)?.slice(0, 40)} vs ${JSON.stringify(d.b)?.slice(0, 40)}`).join("; ")}; compare like with like`,
          );
          return;
        }
        const rules = parseRules(inputs.thresholds);
        const cmp = compareRows(
          documentPoints(doc),
          documentPoints(baselineDoc.doc),
          DEFAULT_THRESHOLDS,
          rules,
        );
        rows = cmp.rows;
        baselineRuns = 1;
        baseBranch = branch ?? "baseline";
        rulesText = cmp.rules;
        regressions += cmp.rows.filter((r) => r.verdict === "regressed").length;
        severities.push(...cmp.rows.map((r) => r.severity));
        core.info(`compared against ${baselineDoc.source}`);
      } catch (err) {
        const msg = `baseline: ${(err as Error).message}`;
        if (failOn !== "never") {
          core.setFailed(`${msg} (fail-on: ${failOn} cannot be decided without it)`);
          return;
        }
        core.warning(msg);
      }
    }
    // A push to the default branch: say when the branch's own history has a new segment.
    if (
      inputs.resultsUrl &&
      ctx.repository &&
      ctx.eventName === "push" &&
      doc.git?.branch &&
      doc.git.branch === (payload?.repository?.default_branch ?? "main") &&
      doc.kind === "sweep" &&
      doc.levels.length > 0
    ) {
      const top = doc.levels[doc.levels.length - 1]!;
      const cps = await recentChangePoints(
        inputs.resultsUrl,
        ctx.repository,
        doc.git.branch,
        [
          { benchmark: benchmarkName(top), measure: "output_tok_s", label: "output tok/s" },
          { benchmark: benchmarkName(top), measure: "ttft_p95_ms", label: "TTFT p95" },
        ],
        inputs.readToken,
      );
      if (cps.length > 0) changeNotes.push(`#### Change points on ${doc.git.branch}\n\n${cps.join("\n")}`);
    }
    const testbed = testbedDisplayName(doc, testbedSpec(doc));
    const md = renderComment({
      doc,
      testbed,
      rows,
      baseBranch,
      baselineRuns,
      links: { run: ctx.runUrl, dashboard: runUrl ?? inputs.dashboardUrl, artifact: artifact.url },
      rules: rulesText,
    });
    markdowns.push(md);
    const prNumber = doc.git?.pr_number ?? null;
    if (prNumber !== null && inputs.comment) {
      if (ctx.isFork && ctx.eventName === "pull_request") {
        core.notice(
          "pull request from a fork: its token cannot comment. Use the two-stage pull_request -> workflow_run pattern (README) to comment.",
        );
      } else if (!inputs.githubToken || ctx.repository === null) {
        core.notice("no github-token: skipping the PR comment");
      } else {
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
            core.notice(
              `cannot comment on the PR with this token (HTTP ${err.status}); skipping. ${err.message}`,
            );
          } else core.warning(`PR comment failed: ${(err as Error).message}`);
        }
      }
    }
  }
  const markdown = markdowns.join("\n\n---\n\n");
  await core.summary.addRaw([markdown, ...changeNotes].join("\n\n"), true).write();
  core.setOutput("results-path", docs[0]?.path ?? "");
  core.setOutput("run-url", firstRunUrl ?? "");
  core.setOutput("regression-count", String(regressions));
  core.setOutput("markdown", markdown);
  if (fails(severities, failOn)) {
    const gating = severities.filter((x) => x === "regression").length;
    const warnings = severities.filter((x) => x === "warning").length;
    core.setFailed(
      `${regressions} measure(s) regressed against the base branch (${gating} by their own rule, ${warnings} by the * rule; fail-on: ${failOn})`,
    );
  }
  const over = docs.flatMap(({ doc }) =>
    doc.levels.filter((l) => l.requests > 0 && (100 * l.errors) / l.requests > inputs.maxErrorRate),
  );
  if (over.length > 0)
    core.setFailed(
      `more than ${inputs.maxErrorRate}% of requests failed at ${over.map((l) => `level ${l.level} (${l.errors} of ${l.requests})`).join(", ")}; the results were kept (input max-error-rate)`,
    );
}

export async function post(): Promise<void> {
  const pid = Number(core.getState("server-pid"));
  if (!pid) return;
  const how = await stopServer(pid);
  core.info(`inference server (pid ${pid}) ${how}`);
  const log = core.getState("server-log");
  if (log) core.info(`server log tail:\n${logTail(log, 60)}`);
}

export { uploadArtifact } from "./artifact.ts";
