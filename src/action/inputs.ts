/**
 * Every Action input, read through the one settings table (src/core/settings/table.ts) in one
 * place. A bad input fails the step with a message naming it. Pure: takes a getter, so tests
 * need no runner.
 */

import { insideOrRefuse } from "../core/results/files.ts";
import { ACTION } from "../core/settings/action-table.ts";
import { inputSource, readSettings, type Values } from "../core/settings/setting.ts";
import { SWEEP } from "../core/settings/sweep-table.ts";
import { CONNECTION, GATING, LOAD, PROFILE } from "../core/settings/table.ts";
import { BoundError, sweepConfigOf } from "../core/sweep/config.ts";
import { UsageError } from "../schema/errors.ts";
import type { ResultDocument, SweepConfig } from "../schema/v1.ts";
import { parseRules, RulesError } from "../shared/rules.ts";
import { workspace } from "./context.ts";

/** A usage error that names the Action input at fault. */
export class InputError extends UsageError {
  constructor(
    readonly input: string,
    problem: string,
  ) {
    super(`input "${input}": ${problem}`, input);
  }
}

export const ACTION_INPUTS = { ...CONNECTION, ...SWEEP, ...LOAD, ...PROFILE, ...GATING, ...ACTION };

export type ActionInputs = Values<typeof ACTION_INPUTS> & {
  sweep: SweepConfig;
  /** Links in the comment: dashboard-url, else results-url. */
  dashboardUrl: string | null;
};

type Get = (name: string) => string;

/**
 * The rules this job judges with, as a document stores them: whatever the service shows of the
 * run (its badge, trend and pages) judges it as this job's comment did. Set from the job's own
 * inputs on every document it uploads, measured here or published from another job's artifact
 * (whose own rules are not trusted: a pull request's job could loosen them).
 */
export function verdictRulesOf(inputs: ActionInputs): NonNullable<ResultDocument["verdict_rules"]> {
  return {
    thresholds: inputs.thresholds,
    gate: inputs.gate,
    fwer_pct: inputs.gateFwer,
    fail_on: inputs.failOn ?? (inputs.failOnRegression ? "warning" : null),
  };
}

export function readInputs(get: Get): ActionInputs {
  const byLabel = new Map(
    Object.values(ACTION_INPUTS)
      .filter((s) => s.input !== null)
      .map((s) => [`input "${s.input}":`, s.input!]),
  );
  let v: Values<typeof ACTION_INPUTS>;
  try {
    v = readSettings(ACTION_INPUTS, inputSource(get));
  } catch (err) {
    if (err instanceof UsageError && err.setting !== null && byLabel.has(err.setting)) {
      const input = byLabel.get(err.setting)!;
      throw new InputError(input, err.message.slice(err.setting.length + 1));
    }
    throw err;
  }
  // The CLI's base-url has a default; the Action asks for it, unless it only publishes.
  if (get("base-url").trim() === "" && v.publishResults === null && v.mergeResults === null)
    throw new InputError("base-url", "is required (unless publish-results or merge-results is set)");
  if (v.publishResults !== null && v.mergeResults !== null)
    throw new InputError("merge-results", "and publish-results are two modes: set one");
  try {
    parseRules(v.thresholds);
  } catch (err) {
    if (err instanceof RulesError) throw new InputError("thresholds", err.message);
    throw err;
  }
  let sweep: SweepConfig;
  try {
    sweep = sweepConfigOf(v, v);
  } catch (err) {
    if (err instanceof BoundError) throw new InputError(SWEEP[err.key].input ?? err.key, err.problem);
    throw err;
  }
  // written to, so it stays in the workspace (a symbolic link committed there could lead out)
  insideOrRefuse(workspace(), v.resultsDir, 'input "results-dir":');
  return { ...v, sweep, dashboardUrl: v.dashboardUrl ?? v.resultsUrl };
}
