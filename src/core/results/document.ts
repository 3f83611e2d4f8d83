/**
 * The one builder of result documents, shared by the sweep and the profile. Provenance (where
 * the run happened: repository, commit, testbed name) is passed in by the caller, so a document
 * is written once, whole, and never rewritten to add it.
 */

import { createHash } from "node:crypto";
import {
  type LevelResult,
  type ProfileSection,
  type PromptCalibration,
  type RequestRecord,
  type ResultDocument,
  SCHEMA_VERSION,
  type ServerSnapshot,
  type SweepConfig,
} from "../../schema/v1.ts";
import { frontierOf } from "../../shared/frontier.ts";
import { canonicalJson, describeTestbed } from "../../shared/testbed.ts";
import { workloadSpec } from "../../shared/workload.ts";
import { type ResolvedTarget, targetRecord } from "../server/target.ts";
import { runValidity } from "./validity.ts";
import { TOOL_VERSION } from "./version.ts";

export const CLOCK_SOURCE = "performance.now() (monotonic), ms from origin";

/** Where a run happened, as the caller knows it (the Action: GitHub's context and its inputs). */
export interface Provenance {
  repository: string | null;
  git: NonNullable<ResultDocument["git"]> | null;
  /** What the user declares of the testbed; the rest (GPU, engine, model) comes from the run. */
  testbed: { name: string | null; engine_flags: string | null } | null;
  runnerName: string | null;
  /** The rules the run will be judged with (the Action's thresholds, gate, fail-on), stored with it. */
  verdictRules?: ResultDocument["verdict_rules"];
}

export interface DocumentParts {
  kind: ResultDocument["kind"];
  /** Wall-clock time of the run's monotonic origin (ms since the epoch). */
  originWallMs: number;
  createdAt?: string;
  target: ResolvedTarget;
  environment: ResultDocument["environment"];
  formulas: Record<string, string>;
  config: SweepConfig | null;
  levels: LevelResult[];
  profile?: ProfileSection;
  server: ServerSnapshot | null;
  requests: RequestRecord[] | null;
  complete: boolean;
  provenance?: Provenance | null;
  promptCalibration?: PromptCalibration | null;
  loadGenerator?: ResultDocument["load_generator"];
  saturation?: ResultDocument["saturation"];
  repeats?: ResultDocument["repeats"];
  gpuTelemetry?: ResultDocument["gpu_telemetry"];
  ab?: ResultDocument["ab"];
  consistency?: ResultDocument["consistency"];
  /** `--server-command`: the server's start as measured (core/server/startup.ts). */
  startup?: ResultDocument["startup"];
}

/** A sweep's frontier when two of its levels are usable (shared/frontier.ts). */
function frontierPart(p: DocumentParts): { frontier?: ResultDocument["frontier"] } {
  const f = frontierOf({ levels: p.levels, config: p.config });
  return f ? { frontier: f } : {};
}

export function buildDocument(p: DocumentParts): ResultDocument {
  const origin = new Date(p.originWallMs).toISOString();
  const target = targetRecord(p.target);
  const pv = p.provenance ?? null;
  const environment =
    pv?.runnerName != null ? { ...p.environment, runner_name: pv.runnerName } : p.environment;
  const doc: ResultDocument = {
    schema_version: SCHEMA_VERSION,
    kind: p.kind,
    tool: { name: "tokenbench", version: TOOL_VERSION },
    created_at: p.createdAt ?? origin,
    target,
    environment,
    clock: { source: CLOCK_SOURCE, origin_wall_time: origin },
    formulas: p.formulas,
    config: p.config,
    levels: p.levels,
    ...(p.profile !== undefined ? { profile: p.profile } : {}),
    server: p.server,
    ...(p.promptCalibration ? { prompt_calibration: p.promptCalibration } : {}),
    requests: p.requests,
    ...(p.loadGenerator ? { load_generator: p.loadGenerator } : {}),
    ...(p.saturation ? { saturation: p.saturation } : {}),
    ...(p.kind === "sweep" ? frontierPart(p) : {}),
    ...(p.repeats ? { repeats: p.repeats } : {}),
    ...(p.gpuTelemetry ? { gpu_telemetry: p.gpuTelemetry } : {}),
    ...(p.ab ? { ab: p.ab } : {}),
    ...(p.consistency ? { consistency: p.consistency } : {}),
    ...(p.startup ? { startup: p.startup } : {}),
    ...(p.kind === "sweep"
      ? { validity: runValidity([...p.levels, ...(p.ab?.blocks.flatMap((b) => b.levels) ?? [])]) }
      : {}),
    complete: p.complete,
  };
  doc.workload_fingerprint = createHash("sha256")
    .update(canonicalJson(workloadSpec(doc)))
    .digest("hex")
    .slice(0, 16);
  if (pv !== null) {
    doc.repository = pv.repository;
    doc.git = pv.git;
    if (pv.testbed !== null) doc.testbed = describeTestbed(doc, pv.testbed);
    if (pv.verdictRules) doc.verdict_rules = pv.verdictRules;
  }
  return doc;
}
