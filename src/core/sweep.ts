/**
 * A sweep: levels run one after another, each measured, aggregated and checkpointed to disk
 * before the next starts, so a killed sweep loses at most the level in progress (`--resume`
 * finishes it without redoing finished levels).
 */
import { existsSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import {
  type LevelResult,
  parseResultDocument,
  type RequestRecord,
  type ResultDocument,
  SCHEMA_VERSION,
  type SweepConfig,
} from "../schema/v1.ts";
import { type ClientConfig, type RequestSpec, StreamClient } from "./client.ts";
import { captureEnvironment } from "./environment.ts";
import { type LevelRun, runClosedLoop, runOpenLoop, runWarmup } from "./load.ts";
import { aggregateLevel, FORMULAS, openLoopStats } from "./metrics.ts";
import { makePrompt, shapeFor } from "./prompts.ts";
import { outputPaths, siblingPath, writeResults } from "./report.ts";
import { SelfCheck } from "./self-check.ts";
import { limitNumber, snapshotServer } from "./server-info.ts";
import { admissionSummary, MetricsSampler } from "./server-metrics.ts";
import { TOOL_VERSION } from "./version.ts";

/** Everything a sweep needs to reach the server (the client's config, less its clock origin). */
export type ConnectionOptions = Omit<ClientConfig, "originMs">;

/** A complete sweep configuration with the CLI's defaults; override what you need. */
export function defaultSweepConfig(over: Partial<SweepConfig> = {}): SweepConfig {
  return {
    mode: "closed",
    levels: [1, 2, 4, 8],
    requests_per_level: 32,
    duration_s: null,
    warmup_requests: 0,
    prompt_tokens: 256,
    max_tokens: 128,
    prompts: "fixed",
    ignore_eos: true,
    seed: 1,
    arrival: "poisson",
    burstiness: 1,
    max_in_flight: null,
    timeout_s: 300,
    slo: { ttft_ms: null, tpot_ms: null, e2e_ms: null },
    extra_body: {},
    metrics_interval_ms: 500,
    header_names: [],
    ...over,
  };
}

export interface SweepOptions extends ConnectionOptions {
  config: SweepConfig;
  out: string | null;
  records: "inline" | "file" | "none";
  resume: boolean;
  onNotice?: (msg: string) => void;
  onProgress?: (p: Progress) => void;
  onLevel?: (l: LevelResult) => void;
  /** Limits the server does not expose (`--server-limit key=value`), e.g. max_running_requests. */
  serverLimits?: Record<string, string | number>;
  /** Extra work around each level (tests, embedding). */
  levelHooks?: LevelHooks;
  shouldStop?: () => boolean;
}

export interface LevelHooks {
  start(level: number, originMs: number): void;
  stop(
    level: LevelResult,
    records: readonly RequestRecord[],
  ): Promise<Partial<LevelResult>> | Partial<LevelResult>;
}

export interface Progress {
  level: number;
  levelIndex: number;
  levelCount: number;
  done: number;
  total: number | null;
  elapsedS: number;
  etaS: number | null;
}

export class SweepError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Closed loop: a level with fewer than 2x its users in requests never measures steady state. */
export function effectiveRequests(
  mode: "closed" | "open",
  level: number,
  requests: number | null,
): number | null {
  if (requests === null) return null;
  if (mode === "closed") return Math.max(requests, 2 * level);
  return requests;
}

function sameConfig(a: SweepConfig, b: SweepConfig): boolean {
  const strip = (c: SweepConfig) => JSON.stringify({ ...c, levels: undefined });
  return strip(a) === strip(b) && JSON.stringify(a.levels) === JSON.stringify(b.levels);
}

export async function runSweep(opts: SweepOptions): Promise<ResultDocument> {
  const cfg = opts.config;
  const notice = opts.onNotice ?? (() => {});
  let levels: LevelResult[] = [];
  let records: RequestRecord[] = [];
  let createdAt = new Date().toISOString();
  let originWall = Date.now();
  let originMs = performance.now();

  if (opts.resume) {
    if (opts.out === null) throw new SweepError("usage", "--resume needs --out");
    if (existsSync(opts.out)) {
      const prev = parseResultDocument(JSON.parse(readFileSync(opts.out, "utf8")));
      if (prev.kind !== "sweep" || prev.config === null || !sameConfig(prev.config, cfg)) {
        throw new SweepError(
          "resume_mismatch",
          `${opts.out} was written with a different configuration; refusing to mix`,
        );
      }
      levels = prev.levels;
      if (prev.requests !== null) records = prev.requests;
      else if (prev.requests_file) {
        const p = siblingPath(opts.out, prev.requests_file);
        if (existsSync(p))
          records = readFileSync(p, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as RequestRecord);
      }
      createdAt = prev.created_at;
      originWall = Date.parse(prev.clock.origin_wall_time);
      // Same timeline as the first part: map the old origin onto this process's monotonic clock.
      originMs = performance.now() - (Date.now() - originWall);
      notice(`resuming ${opts.out}: ${levels.length} of ${cfg.levels.length} levels already done`);
    }
  }

  const client = new StreamClient({ ...opts, originMs });
  const environment = await captureEnvironment();
  const authHeaders = { ...opts.headers, ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) };
  const server = await snapshotServer(opts.baseUrl, authHeaders, opts.serverLimits ?? {});
  const metricsUrl = `${opts.baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}/metrics`;
  const sampler =
    cfg.metrics_interval_ms !== null
      ? new MetricsSampler(metricsUrl, authHeaders, cfg.metrics_interval_ms, originMs)
      : null;
  const limits = {
    maxRunningRequests: limitNumber(server.limits, "max_running_requests"),
    cudaGraphMaxBs: limitNumber(server.limits, "cuda_graph_max_bs"),
  };
  const doc = (complete: boolean): ResultDocument => ({
    schema_version: SCHEMA_VERSION,
    kind: "sweep",
    tool: { name: "tokenbench", version: TOOL_VERSION },
    created_at: createdAt,
    target: { base_url: opts.baseUrl, api: opts.api, model: opts.model },
    environment,
    clock: {
      source: "performance.now() (monotonic), ms from origin",
      origin_wall_time: new Date(originWall).toISOString(),
    },
    formulas: FORMULAS,
    config: cfg,
    levels,
    server,
    requests: null,
    complete,
  });
  const checkpoint = (complete: boolean) => {
    if (opts.out !== null) writeResults(doc(complete), opts.out, records, opts.records);
  };

  let nextId = records.reduce((m, r) => Math.max(m, r.id + 1), 0);
  try {
    for (let li = 0; li < cfg.levels.length; li++) {
      const level = cfg.levels[li]!;
      if (levels.some((l) => l.level === level)) continue;
      if (opts.shouldStop?.()) break;
      const nReq = effectiveRequests(cfg.mode, level, cfg.requests_per_level);
      const levelNotices: string[] = [];
      if (
        cfg.mode === "closed" &&
        nReq !== null &&
        cfg.requests_per_level !== null &&
        nReq > cfg.requests_per_level
      ) {
        const msg = `level ${level}: raised --requests from ${cfg.requests_per_level} to ${nReq} (at least 2x the ${level} users, so every user sends at least twice)`;
        levelNotices.push(msg);
        notice(msg);
      }
      const levelSeed = (cfg.seed + 7919 * (li + 1)) >>> 0;
      const fixed = { promptTokens: cfg.prompt_tokens, maxTokens: cfg.max_tokens };
      const makeSpec = (i: number, warmup: boolean, intended: number | null): RequestSpec => {
        const id = nextId++;
        const shape = shapeFor(cfg.prompts, warmup ? 1_000_000 + i : i, levelSeed, fixed);
        return {
          id,
          level,
          warmup,
          prompt: makePrompt(shape.promptTokens, levelSeed + i, id + cfg.seed * 1_000_003),
          maxTokens: shape.maxTokens,
          promptTokensRequested: shape.promptTokens,
          intendedSendAbsMs: intended,
        };
      };
      const warm = await runWarmup(
        client,
        makeSpec,
        cfg.warmup_requests,
        cfg.mode === "closed" ? level : Math.max(1, Math.ceil(level)),
      );
      records.push(...warm);

      const selfCheck = new SelfCheck();
      const levelT0 = performance.now();
      let done = 0;
      const report = () => {
        const elapsedS = (performance.now() - levelT0) / 1000;
        const total = nReq ?? null;
        const etaS =
          total !== null && done > 0
            ? (elapsedS / done) * (total - done)
            : cfg.duration_s !== null
              ? Math.max(0, cfg.duration_s - elapsedS)
              : null;
        opts.onProgress?.({
          level,
          levelIndex: li,
          levelCount: cfg.levels.length,
          done,
          total,
          elapsedS,
          etaS,
        });
      };
      const progressTimer = setInterval(report, 1000);
      opts.levelHooks?.start(level, originMs);
      sampler?.start();
      selfCheck.start();
      let run: LevelRun;
      const onRecord = () => {
        done++;
      };
      try {
        if (cfg.mode === "closed") {
          run = await runClosedLoop(client, makeSpec, {
            concurrency: level,
            requests: nReq,
            durationS: cfg.duration_s,
            onRecord,
            ...(opts.shouldStop ? { shouldStop: opts.shouldStop } : {}),
          });
        } else {
          run = await runOpenLoop(client, makeSpec, {
            rateRps: level,
            arrival: cfg.arrival,
            burstiness: cfg.burstiness,
            seed: levelSeed,
            requests: nReq,
            durationS: cfg.duration_s,
            maxInFlight: cfg.max_in_flight,
            onRecord,
            ...(opts.shouldStop ? { shouldStop: opts.shouldStop } : {}),
          });
        }
      } finally {
        clearInterval(progressTimer);
      }
      const client_ = selfCheck.stop(
        run.records.filter((r) => r.dispatch_ms !== undefined).map((r) => r.send_ms - r.dispatch_ms!),
      );
      await sampler?.stop();
      report();
      if (opts.shouldStop?.()) {
        notice(`level ${level} interrupted; not recorded`);
        break;
      }
      records.push(...run.records);
      const agg = aggregateLevel({
        level,
        mode: cfg.mode,
        concurrency: cfg.mode === "closed" ? level : null,
        records: run.records,
        warmupRequests: warm.length,
        slo: cfg.slo,
      });
      let openLoop: LevelResult["open_loop"] = null;
      if (cfg.mode === "open") {
        const ol = openLoopStats(run.records);
        const sends = run.records.map((r) => r.send_ms);
        const spanS = sends.length > 1 ? (Math.max(...sends) - Math.min(...sends)) / 1000 : 0;
        const achieved = spanS > 0 ? (sends.length - 1) / spanS : null;
        openLoop = {
          arrival: cfg.arrival,
          burstiness: cfg.burstiness,
          target_rate_rps: level,
          achieved_rate_rps: achieved,
          schedule_lag_ms: ol.lag,
          late_arrivals: ol.lateArrivals,
          dropped_arrivals: run.droppedArrivals,
          drain_time_s: run.drainTimeS,
          ttft_from_intended_ms: ol.ttftFromIntended,
          e2e_from_intended_ms: ol.e2eFromIntended,
        };
      }
      if (client_.bottleneck_warning) {
        levelNotices.push(client_.bottleneck_warning);
        notice(`level ${level}: ${client_.bottleneck_warning}`);
      }
      if (agg.errors > 0) {
        const codes = Object.entries(agg.errors_by_code)
          .map(([c, n]) => `${c}=${n}`)
          .join(", ");
        notice(`level ${level}: ${agg.errors} of ${agg.requests} requests failed (${codes})`);
      }
      let result: LevelResult = { ...agg, open_loop: openLoop, client: client_, notices: levelNotices };
      if (sampler !== null) {
        const qd =
          sampler.queueStart && sampler.queueEnd
            ? {
                sum: sampler.queueEnd.sum - sampler.queueStart.sum,
                count: sampler.queueEnd.count - sampler.queueStart.count,
              }
            : null;
        const admission = admissionSummary({
          level: result,
          records: run.records,
          samples: sampler.samples,
          metricsAvailable: sampler.available,
          queueDelta: qd,
          limits,
        });
        result = { ...result, admission, metrics_timeline: sampler.samples };
        for (const n of admission.notes) notice(`level ${level}: ${n}`);
      }
      if (opts.levelHooks) result = { ...result, ...(await opts.levelHooks.stop(result, run.records)) };
      levels.push(result);
      levels.sort((a, b) => cfg.levels.indexOf(a.level) - cfg.levels.indexOf(b.level));
      checkpoint(false);
      opts.onLevel?.(result);
    }
  } finally {
    await client.close().catch(() => {});
  }
  const complete = cfg.levels.every((l) => levels.some((x) => x.level === l));
  checkpoint(complete);
  const final = doc(complete);
  final.requests = opts.records === "inline" ? records : null;
  if (opts.records === "file" && opts.out) final.requests_file = outputPaths(opts.out).requestsFile;
  return final;
}
