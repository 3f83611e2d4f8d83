/**
 * The Action's measuring step: the same sweep setup as the CLI (core/sweep/prepare.ts), with the
 * Action's `server-command` started once the workload files are read, then the sweep (and the
 * profile, through the same preflight) written under `results-dir`.
 */

import { join, resolve } from "node:path";
import * as core from "@actions/core";
import { profileConfigOf, runProfile } from "../core/profile/profile.ts";
import type { Provenance } from "../core/results/document.ts";
import { probeGpu } from "../core/results/environment.ts";
import { assertWritable, insideOrRefuse, writeResults } from "../core/results/files.ts";
import { noticeWriter } from "../core/results/notices.ts";
import { markdownReport } from "../core/results/report.ts";
import { logTail } from "../core/server/server-process.ts";
import { prepareSweep, type SweepSetup } from "../core/sweep/prepare.ts";
import { runSweep } from "../core/sweep/sweep.ts";
import { TokenbenchError, UsageError } from "../schema/errors.ts";
import { type RunContext, workspace } from "./context.ts";
import { fail } from "./failure.ts";
import { type ActionInputs, verdictRulesOf } from "./inputs.ts";
import type { Docs } from "./modes.ts";

/** The input a workload file's error belongs to, so the message names it. */
const FILE_INPUT: Record<string, string> = {
  dataset_invalid: "dataset",
  trace_invalid: "trace",
  agent_sessions_invalid: "agent-sessions",
  tools_invalid: "tools",
};

/** One line per level, each once, as the CLI prints them. */
const notice = noticeWriter((line) => core.info(`notice: ${line}`));

/** Prepare the sweep, or fail the step with the reason (and the server log's tail). */
async function setUp(inputs: ActionInputs): Promise<SweepSetup> {
  const dir = inputs.resultsDir;
  try {
    for (const [input, path] of [
      ["dataset", inputs.dataset],
      ["trace", inputs.trace],
      ["agent-sessions", inputs.agentSessions],
      ["tools", inputs.tools],
    ] as const)
      if (path !== null) insideOrRefuse(workspace(), path, `input "${input}":`);
    const setup = await prepareSweep(inputs, inputs.sweep, {
      onNotice: notice,
      serverLog: resolve(dir, "server.log"),
      onServerStarted: (pid, log) => {
        core.saveState("server-pid", String(pid));
        core.saveState("server-log", log);
        core.info(`started the inference server (pid ${pid}); log: ${log}`);
      },
    });
    const r = setup.pre.readiness;
    core.info(
      `server ready after ${r.waited_s.toFixed(1)} s: ${r.probes.join("; ")} (model ${setup.pre.target.model})`,
    );
    return setup;
  } catch (err) {
    const input =
      err instanceof UsageError && err.setting?.startsWith("--")
        ? err.setting.slice(2)
        : err instanceof TokenbenchError
          ? FILE_INPUT[err.code]
          : undefined;
    if (input !== undefined) fail(`input "${input}": ${(err as Error).message}`);
    const tail = inputs.serverCommand ? logTail(resolve(dir, "server.log")) : "";
    const code = err instanceof TokenbenchError ? `[${err.code}] ` : "";
    fail(`${code}${(err as Error).message}${tail ? `\nserver log (last lines):\n${tail}` : ""}`);
  }
}

/** Measure: the sweep, then the profile when asked. */
export async function measure(inputs: ActionInputs, ctx: RunContext): Promise<Docs> {
  const dir = inputs.resultsDir;
  try {
    assertWritable(join(dir, "results.json"));
  } catch (err) {
    fail(`[out_unwritable] ${(err as Error).message.replace("--out", "results-dir")}`);
  }
  const setup = await setUp(inputs);
  if ((await probeGpu()) === null) core.info("nvidia-smi not found: GPU recorded as unknown");
  // Provenance goes into the documents as they are written: nothing is rewritten afterwards.
  const provenance: Provenance = {
    repository: ctx.repository,
    git: ctx.git,
    testbed: { name: inputs.testbed, engine_flags: inputs.serverCommand },
    runnerName: ctx.runnerName,
    // judged with these wherever it is shown (the service's badge, trend and pages too)
    verdictRules: verdictRulesOf(inputs),
  };
  const docs: Docs = [];
  await core.group("sweep", async () => {
    const path = join(dir, "results.json");
    const doc = await runSweep({
      ...setup,
      out: path,
      records: "inline",
      resume: false,
      provenance,
      onNotice: notice,
    });
    docs.push({ doc, path });
    core.info(markdownReport(doc));
  });
  if (inputs.profile) {
    await core.group("profile", async () => {
      const doc = await runProfile({
        pre: setup.pre,
        timeoutS: inputs.timeoutS,
        provenance,
        config: profileConfigOf(inputs, inputs),
      });
      const path = join(dir, "profile.json");
      writeResults(doc, path, doc.requests ?? [], "inline");
      docs.push({ doc, path });
    });
  }
  return docs;
}
