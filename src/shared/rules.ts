/**
 * Thresholds and gating, one syntax for `tokenbench compare`, the results service's compare and
 * the Action:
 *
 *   thresholds: "ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test"
 *   fail-on:    regression | warning | never
 *
 * A rule names a measure (or `*`, every measure no other rule names) and how it is judged:
 *   `+N%` / `-N%` / `N%`  a change of more than N % of the baseline, direction-aware (the sign
 *                         documents the bad direction; a sign against the measure's is an error);
 *   `t-test`              the statistical rule: the method the evidence allows (shared/verdict.ts:
 *                         repeats-t, history-t, bootstrap), else the default percentage;
 *   `off`                 not judged (shown, never gating).
 * A measure named by its own rule gates: its regressions are `regression`s. Measures judged by
 * `*` warn: their regressions are `warning`s. `fail-on: regression` fails on the first kind,
 * `warning` on either, `never` on neither. Default: `*=t-test` and `regression` (everywhere).
 */

import type { Direction } from "./measures.ts";
import { MEASURE_BY_NAME } from "./measures.ts";
import type { Verdict } from "./statistics.ts";

export type Rule =
  | { kind: "percent"; pct: number; text: string }
  | { kind: "t-test"; text: string }
  | { kind: "off"; text: string };

export interface Rules {
  byMeasure: Map<string, Rule>;
  rest: Rule;
  /** The rules as given, normalised: what the comment and the API echo. */
  text: string;
}

export type FailOn = "regression" | "warning" | "never";
export const FAIL_ON: readonly FailOn[] = ["regression", "warning", "never"];

export type Severity = "regression" | "warning" | "none";

export const DEFAULT_RULES_TEXT = "*=t-test";

export class RulesError extends Error {}

function parseRule(measure: string, spec: string): Rule {
  const s = spec.trim().toLowerCase();
  if (s === "t-test" || s === "ttest") return { kind: "t-test", text: "t-test" };
  if (s === "off") return { kind: "off", text: "off" };
  const m = /^([+-]?)(\d+(?:\.\d+)?)%$/.exec(s);
  if (!m) throw new RulesError(`rule for ${measure}: "${spec}" is not +N%, -N%, N%, t-test or off`);
  const pct = Number(m[2]);
  const def = MEASURE_BY_NAME.get(measure);
  if (def && m[1] !== "") {
    const bad = def.direction === "lower" ? "+" : "-";
    if (m[1] !== bad)
      throw new RulesError(
        `rule for ${measure}: ${measure} is ${def.direction} is better, so its regressions are ${bad}N%, not ${m[1]}${m[2]}%`,
      );
  }
  return {
    kind: "percent",
    pct,
    text: `${m[1] || (def?.direction === "lower" ? "+" : def ? "-" : "")}${m[2]}%`,
  };
}

/** `"ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test"` as rules; errors name the part at fault. */
export function parseRules(given: string | null | undefined): Rules {
  const byMeasure = new Map<string, Rule>();
  let rest: Rule = { kind: "t-test", text: "t-test" };
  const src = (given ?? "").trim() || DEFAULT_RULES_TEXT;
  for (const part of src.split(",").map((p) => p.trim())) {
    if (part === "") throw new RulesError(`an empty rule in "${src}"`);
    const eq = part.indexOf("=");
    if (eq <= 0) throw new RulesError(`"${part}" is not measure=rule (e.g. ttft_p95_ms=+10%)`);
    const measure = part.slice(0, eq).trim();
    const rule = parseRule(measure, part.slice(eq + 1));
    if (measure === "*") rest = rule;
    else {
      if (!MEASURE_BY_NAME.has(measure))
        throw new RulesError(
          `unknown measure "${measure}" (known: ${[...MEASURE_BY_NAME.keys()].join(", ")})`,
        );
      if (byMeasure.has(measure)) throw new RulesError(`${measure} has two rules`);
      byMeasure.set(measure, rule);
    }
  }
  const text = [...[...byMeasure].map(([m, r]) => `${m}=${r.text}`), `*=${rest.text}`].join(", ");
  return { byMeasure, rest, text };
}

/**
 * The one default, for `tokenbench compare`, the Action and the service: fail on regressions of
 * measures with their own rule; the * rule only warns (so the default rules never fail a check).
 */
export const DEFAULT_FAIL_ON: FailOn = "regression";

/** Whether any verdict under these rules could fail a check with `failOn`. */
export function canFail(rules: Rules, failOn: FailOn): boolean {
  return failOn === "warning" || (failOn === "regression" && rules.byMeasure.size > 0);
}

export function parseFailOn(s: string | null | undefined): FailOn {
  const v = (s ?? "").trim() || DEFAULT_FAIL_ON;
  if (!(FAIL_ON as readonly string[]).includes(v))
    throw new RulesError(`fail-on must be one of ${FAIL_ON.join(", ")}, got "${v}"`);
  return v as FailOn;
}

/** The rule that judges `measure`, and whether its regressions gate. */
export function ruleFor(rules: Rules, measure: string): { rule: Rule; gating: boolean } {
  const own = rules.byMeasure.get(measure);
  return own ? { rule: own, gating: true } : { rule: rules.rest, gating: false };
}

/** The percentage rule's verdict: |delta %| > pct, direction-aware; no baseline, no verdict. */
export function percentVerdict(deltaPct: number | null, pct: number, direction: Direction): Verdict {
  if (deltaPct === null) return "no_baseline";
  if (Math.abs(deltaPct) <= pct) return "unchanged";
  return deltaPct > 0 === (direction === "higher") ? "improved" : "regressed";
}

export function severityOf(verdict: Verdict, gating: boolean): Severity {
  if (verdict !== "regressed") return "none";
  return gating ? "regression" : "warning";
}

/** Whether these severities fail the check under `failOn`. */
export function fails(severities: readonly Severity[], failOn: FailOn): boolean {
  if (failOn === "never") return false;
  if (failOn === "regression") return severities.includes("regression");
  return severities.some((s) => s !== "none");
}
