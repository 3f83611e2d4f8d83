/**
 * One sweep setup for the CLI and the Action: read the workload file and record it in the
 * configuration, resolve the load generator and the run's salt, run the preflight, and build a
 * trace's prompts once the server's token count is known. Both callers then only run the sweep
 * and write what it measured.
 */

import { UsageError } from "../../schema/errors.ts";
import type { SweepConfig } from "../../schema/v1.ts";
import { type LoadGenerator, loadGeneratorOf, runSaltOf } from "../load/load-generator.ts";
import { CACHE_RESET_TEXT, cacheResetMethod, refuseWithoutReset, resetCache } from "../server/cache-reset.ts";
import { type Preflight, preflight } from "../server/preflight.ts";
import { stopServer } from "../server/server-process.ts";
import { coldFigures, launch, type Startup, warmRestart } from "../server/startup.ts";
import { makeTarget } from "../server/target.ts";
import type { Values } from "../settings/setting.ts";
import type { SWEEP } from "../settings/sweep-table.ts";
import type { CONNECTION, LOAD } from "../settings/table.ts";
import {
  agentDataset,
  agentSessionsRecord,
  agentsLongest,
  loadAgentSessions,
} from "../workload/agent-sessions.ts";
import { type Dataset, loadDataset, sharedSystemShare } from "../workload/dataset.ts";
import { loadTools } from "../workload/tool-definitions.ts";
import { loadTrace, traceReplay } from "../workload/trace.ts";
import { checkCombination } from "./combination.ts";

/** The settings a sweep is set up from: the CLI's flags or the Action's inputs, read by one table. */
export type SweepSettings = Values<typeof CONNECTION> &
  Values<typeof SWEEP> &
  Values<typeof LOAD> & { resume?: boolean };

export interface SweepSetup {
  /** The configuration as measured: the workload file recorded, a trace's rate and lengths set. */
  config: SweepConfig;
  pre: Preflight;
  load: LoadGenerator;
  salt: number;
  /** `--dataset`, or the trace's requests as prompts (sized by the calibration). */
  dataset: Dataset | null;
  /** `--ab-base-url`: the base's server (its own preflight) and the pairs of blocks. */
  ab: { pre: Preflight; pairs: number } | null;
  /** `--consistency N`: fixed prompts to fingerprint the answers of (0: none). */
  consistency: number;
  /** `--gpu-metrics-url` as given, credentials and all (the configuration records its public form). */
  gpuMetricsUrl: string | null;
  /** `--server-command`: the server started (its pid and log, to stop it when done) and its start's figures. */
  server: { pid: number; log: string } | null;
  startup: Startup | null;
}

export interface PrepareOptions {
  onNotice: (m: string) => void;
  /** `--server-command`: where its output goes (default server.log here). */
  serverLog?: string;
  /** `--server-command`: each process started (the Action keeps its pid to stop it in the post step). */
  onServerStarted?: (pid: number, log: string) => void;
}

/**
 * `config` is the one `sweepConfigOf` made from the same settings; it is completed here, in place.
 * A server started for a sweep that then cannot run (not ready, a refused combination) is stopped.
 */
export async function prepareSweep(
  v: SweepSettings,
  config: SweepConfig,
  o: PrepareOptions,
): Promise<SweepSetup> {
  let pid: number | null = null;
  try {
    return await prepare(v, config, {
      ...o,
      onServerStarted: (p, log) => {
        pid = p;
        o.onServerStarted?.(p, log);
      },
    });
  } catch (err) {
    if (pid !== null) await stopServer(pid);
    throw err;
  }
}

async function prepare(v: SweepSettings, config: SweepConfig, o: PrepareOptions): Promise<SweepSetup> {
  const file = v.dataset !== null ? loadDataset(v.dataset) : null;
  if (file)
    config.dataset = {
      name: file.name,
      lines: file.lines,
      sha256: file.sha256,
      shared_share: Number(sharedSystemShare(file).toFixed(4)),
    };
  if (v.tools !== null) config.tools = loadTools(v.tools, v.toolChoice);
  const trace = v.trace !== null ? loadTrace(v.trace) : null;
  const agents = v.agentSessions !== null ? loadAgentSessions(v.agentSessions) : null;
  if (agents)
    config.agent_sessions = {
      ...agentSessionsRecord(agents),
      ...(v.toolWait !== "file" ? { tool_wait: v.toolWait } : {}),
    };
  for (const n of [...(file?.notices ?? []), ...(trace?.notices ?? [])]) o.onNotice(n);
  const replay = trace ? traceReplay(trace, config, v.traceSpeed, v.requests, v.maxDurationS) : null;
  const target = makeTarget(v);
  const load = loadGeneratorOf(v, config, target);
  // A combination the sweep refuses is refused before any server is started or contacted.
  checkCombination(config, load, {
    resume: v.resume ?? false,
    ab: v.abBaseUrl !== null,
    serverCommand: v.serverCommand !== null,
  });
  // The server is started only now: a bad file or combination fails before it is.
  const log = o.serverLog ?? "server.log";
  let started = v.serverCommand !== null ? launch(v.serverCommand, log) : null;
  if (started) o.onServerStarted?.(started.pid, log);
  let startup: Startup | null = null;
  const contact = (t: typeof target, calibrate: boolean, own: boolean) =>
    preflight(t, config, {
      readyTimeoutS: v.readyTimeoutS,
      serverLimits: v.serverLimits,
      calibrate,
      onNotice: o.onNotice,
      ...(started && own
        ? {
            serverExited: started.exited,
            afterReady: async (ready, readiness) => {
              startup = await coldFigures(started!, ready, readiness);
            },
          }
        : {}),
      ...(replay ? { longest: replay.longest } : agents ? { longest: agentsLongest(agents) } : {}),
    });
  const pre = await contact(target, v.calibratePrompts, true);
  if (started && startup !== null && v.startup === "both") {
    // a warm start: the same command again, the machine's caches now filled
    const warm = await warmRestart(v.serverCommand!, log, started.pid, pre.target, v.readyTimeoutS, (pid) =>
      o.onServerStarted?.(pid, log),
    );
    started = warm.run;
    startup = { ...(startup as Startup), warm: warm.figures };
  }
  // The base's server: its own readiness and model; the head's prompt sizing serves both.
  const basePre =
    v.abBaseUrl !== null ? await contact(makeTarget({ ...v, baseUrl: v.abBaseUrl }), false, false) : null;
  if (config.cache_reset) {
    // The server's own reset, found from what it serves and tried once now: a server without one
    // (or started without what it needs) is refused before any load, and the sweep starts cold.
    for (const p of basePre ? [pre, basePre] : [pre]) {
      const method = cacheResetMethod(p.server) ?? refuseWithoutReset(p.target);
      if (config.cache_reset.method !== null && config.cache_reset.method !== method)
        throw new UsageError(
          `--cache-reset with --ab-base-url: the two servers reset their caches differently (${config.cache_reset.method}, ${method}); compare servers of one engine`,
          "--cache-reset",
        );
      config.cache_reset.method = method;
      await resetCache(p.target, method);
    }
    o.onNotice(
      `cache reset: ${CACHE_RESET_TEXT[config.cache_reset.method!]}, ${config.cache_reset.mode === "level" ? "before each level" : "once, before the first level"}`,
    );
  }
  const salt = runSaltOf(load);
  // A trace's prompts are sized once the server's token count is known.
  const dataset = replay ? replay.build(pre.calibration, salt) : agents ? agentDataset(agents) : file;
  return {
    config,
    pre,
    load,
    salt,
    dataset,
    ab: basePre ? { pre: { ...basePre, calibration: pre.calibration }, pairs: v.abPairs } : null,
    consistency: v.consistency,
    gpuMetricsUrl: v.gpuMetricsUrl,
    server: started ? { pid: started.pid, log } : null,
    startup,
  };
}
