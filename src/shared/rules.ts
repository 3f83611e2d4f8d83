/**
 * Thresholds and gating, one syntax for `tokenbench compare`, the results service's compare and
 * the Action:
 *
 *   thresholds: "ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test"
 *   gate:       "output_tok_s, ttft_p95_ms, ttft_p50_ms, error_rate"   (or measure@level, or off)
 *   fail-on:    regression | unjudged | warning | never
 *
 * A rule names a measure (or `*`, every measure no other rule names) and how it is judged:
 *   `+N%` / `-N%` / `N%`  a change of more than N % of the baseline, direction-aware (the sign
 *                         documents the bad direction; a sign against the measure's is an error);
 *   `t-test`              the statistical rule: the method the evidence allows (shared/verdict.ts:
 *                         repeats-t, history-t, bootstrap), else the default percentage;
 *   `off`                 not judged (shown, never gating).
 * The gate's rows (and any measure named by its own rule) decide: their regressions are
 * `regression`s, judged one-sided with the family-wise error rate held (shared/gate.ts), a `+N%`
 * rule being the smallest change that counts. Every other row is informational: its regressions
 * are `warning`s. Default: `*=t-test`, the default gate and `regression` (everywhere).
 */

import { MEASURE_BY_NAME } from "./measures.ts";

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

/**
 * What fails a check: `regression` the gate failing (the default), `unjudged` also a gate that
 * could not judge (a gated row not judged: an invalid level, a missing baseline level), `warning`
 * also any other row that regressed, `never` nothing.
 */
export type FailOn = "regression" | "unjudged" | "warning" | "never";
export const FAIL_ON: readonly FailOn[] = ["regression", "unjudged", "warning", "never"];

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

/** The one default, for `tokenbench compare`, the Action and the service: fail when the gate fails. */
export const DEFAULT_FAIL_ON: FailOn = "regression";

/** Whether a check with `failOn` can fail at all (the gate is on unless `gate: off`). */
export function canFail(gate: Gate, failOn: FailOn): boolean {
  return failOn === "warning" || (failOn !== "never" && !gate.off);
}

/**
 * The gate: which rows decide a pull request (shared/gate.ts). A list of measures (every level)
 * or `measure@level` (one level), or `off`. Default: output tok/s, TTFT p50 and p95 at every
 * level, and the error rate. A measure given its own rule in `thresholds` joins it.
 */
export interface Gate {
  off: boolean;
  /** Measure -> the levels it is gated at (null: every level), in the order given. */
  measures: Map<string, Set<number> | null>;
  text: string;
}

export const DEFAULT_GATE_TEXT = "output_tok_s, ttft_p95_ms, ttft_p50_ms, error_rate";

export function parseGate(given: string | null | undefined, rules?: Rules): Gate {
  const src = (given ?? "").trim() || DEFAULT_GATE_TEXT;
  const measures = new Map<string, Set<number> | null>();
  if (src.toLowerCase() === "off") return { off: true, measures, text: "off" };
  for (const part of src.split(",").map((p) => p.trim())) {
    if (part === "") throw new RulesError(`an empty entry in the gate "${src}"`);
    const [name, at] = part.split("@").map((x) => x.trim()) as [string, string | undefined];
    if (!MEASURE_BY_NAME.has(name))
      throw new RulesError(
        `gate: unknown measure "${name}" (known: ${[...MEASURE_BY_NAME.keys()].join(", ")})`,
      );
    if (at === undefined) {
      measures.set(name, null);
      continue;
    }
    const level = Number(at.replace(/^c=/, ""));
    if (!(level > 0)) throw new RulesError(`gate: "${part}" is not measure@level (e.g. ttft_p95_ms@16)`);
    const prev = measures.get(name);
    if (prev === null) continue;
    measures.set(name, new Set([...(prev ?? []), level]));
  }
  for (const [m, r] of rules?.byMeasure ?? [])
    if (r.kind !== "off" && !measures.has(m)) measures.set(m, null);
  for (const [m, r] of rules?.byMeasure ?? []) if (r.kind === "off") measures.delete(m);
  const text = [...measures]
    .map(([m, at]) => (at === null ? m : [...at].map((l) => `${m}@${l}`).join(", ")))
    .join(", ");
  return { off: false, measures, text };
}

/** Whether a row of `measure` at `level` is gated. */
export function isGated(gate: Gate, measure: string, level: number | null): boolean {
  if (gate.off || !gate.measures.has(measure)) return false;
  const at = gate.measures.get(measure);
  return at === null || at === undefined || (level !== null && at.has(level));
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

export function severityOf(verdict: string, gating: boolean): Severity {
  if (verdict !== "regressed") return "none";
  return gating ? "regression" : "warning";
}

/** Whether a comparison fails the check under `failOn`: the gate's status, and for `warning` any row. */
export function fails(
  outcome: {
    gate: "passed" | "failed" | "not_gated" | "cannot_judge" | "no_baseline" | "off";
    severities: readonly Severity[];
  },
  failOn: FailOn,
): boolean {
  if (failOn === "never") return false;
  if (outcome.gate === "failed") return true;
  if (failOn === "regression") return false;
  if (outcome.gate === "cannot_judge") return true;
  return failOn === "warning" && outcome.severities.some((s) => s !== "none");
}
