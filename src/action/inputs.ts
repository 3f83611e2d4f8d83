/**
 * Every Action input, parsed and validated in one place. A bad input fails the step with a
 * message naming it. Pure: takes a getter, so tests need no runner.
 */
import {
  FlagError,
  flagBool,
  flagList,
  flagNumber,
  flagOneOf,
  positive,
  positiveInt,
  sweepConfigFromFlags,
} from "../core/sweep-flags.ts";
import type { SweepConfig } from "../schema/v1.ts";

export class InputError extends Error {
  constructor(
    readonly input: string,
    message: string,
  ) {
    super(`input "${input}": ${message}`);
  }
}

export interface ActionInputs {
  /** Publish-only mode: results written by an earlier job (fork-safe workflow_run pattern). */
  publishResults: string | null;
  baseUrl: string;
  model: string | null;
  api: "chat" | "completions";
  serverApiKey: string | null;
  serverCommand: string | null;
  readyTimeoutS: number;
  timeoutS: number;
  sweep: SweepConfig;
  profile: boolean;
  profileTargets: number[];
  profileRepetitions: number;
  testbed: string | null;
  resultsUrl: string | null;
  audience: string;
  apiToken: string | null;
  githubToken: string | null;
  comment: boolean;
  failOnRegression: boolean;
  failOnUploadError: boolean;
  artifactName: string;
  dashboardUrl: string | null;
  resultsDir: string;
}

type Get = (name: string) => string;

function str(get: Get, name: string): string | null {
  const v = get(name).trim();
  return v === "" ? null : v;
}
function url(get: Get, name: string): string | null {
  const v = str(get, name);
  if (v === null) return null;
  try {
    const u = new URL(v);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    throw new InputError(name, `must be an http(s) URL, got "${v}"`);
  }
  return v.replace(/\/+$/, "");
}

function readInputsOrThrow(get: Get): ActionInputs {
  const publishResults = str(get, "publish-results");
  const baseUrl = url(get, "base-url");
  if (baseUrl === null && publishResults === null)
    throw new InputError("base-url", "is required (unless publish-results is set)");
  const resultsUrl = url(get, "results-url");
  const sweep: SweepConfig = sweepConfigFromFlags(get, {
    closedLevels: [1, 4, 16],
    openLevels: [1, 2, 4],
    warmup: 2,
  });
  return {
    publishResults,
    baseUrl: baseUrl ?? "",
    model: str(get, "model"),
    api: flagOneOf(get, "api", ["chat", "completions"] as const, "chat"),
    serverApiKey: str(get, "server-api-key"),
    serverCommand: str(get, "server-command"),
    readyTimeoutS: flagNumber(get, "ready-timeout-s", 900, positive, "a positive number of seconds")!,
    timeoutS: sweep.timeout_s,
    sweep,
    profile: flagBool(get, "profile", false),
    profileTargets: flagList(
      get,
      "profile-targets",
      [512, 1024, 2048, 4096],
      positiveInt,
      "positive integers",
    ),
    profileRepetitions: flagNumber(get, "profile-repetitions", 3, positiveInt, "a positive integer")!,
    testbed: str(get, "testbed"),
    resultsUrl,
    audience: str(get, "audience") ?? "tokenbench",
    apiToken: str(get, "api-token"),
    githubToken: str(get, "github-token"),
    comment: flagBool(get, "comment", true),
    failOnRegression: flagBool(get, "fail-on-regression", false),
    failOnUploadError: flagBool(get, "fail-on-upload-error", false),
    artifactName: str(get, "artifact-name") ?? "tokenbench-results",
    dashboardUrl: url(get, "dashboard-url") ?? resultsUrl,
    resultsDir: str(get, "results-dir") ?? "tokenbench-results",
  };
}

export function readInputs(get: Get): ActionInputs {
  try {
    return readInputsOrThrow(get);
  } catch (err) {
    if (err instanceof FlagError) throw new InputError(err.flag, err.problem);
    throw err;
  }
}
