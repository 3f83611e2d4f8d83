/**
 * Thresholds and gating: one syntax, parsed once, the same verdicts wherever they are used.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareDocuments } from "../../../src/core/documents/compare.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { pointsRun } from "../../../src/shared/evidence.ts";
import { documentPoints } from "../../../src/shared/measures.ts";
import { fails, isGated, parseFailOn, parseGate, parseRules, RulesError } from "../../../src/shared/rules.ts";
import { type Evidence, judgeRuns } from "../../../src/shared/verdict.ts";

const example = (): ResultDocument =>
  parseResultDocument(JSON.parse(readFileSync("schema/examples/closed-sweep.json", "utf8")));

describe("parsing", () => {
  it("normalises rules, the measure's bad direction as the sign", () => {
    expect(parseRules("ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test").text).toBe(
      "ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test",
    );
    expect(parseRules("ttft_p95_ms=10%").text).toBe("ttft_p95_ms=+10%, *=t-test");
    expect(parseRules("*=off").text).toBe("*=off");
    expect(parseRules(null).text).toBe("*=t-test");
  });
  it("refuses what it cannot mean, naming the part", () => {
    for (const [bad, msg] of [
      ["ttft_p95_ms=-10%", /lower is better, so its regressions are \+N%/],
      ["output_tok_s=+5%", /higher is better, so its regressions are -N%/],
      ["ttft_p96_ms=+10%", /unknown measure "ttft_p96_ms"/],
      ["ttft_p95_ms=+10%, ttft_p95_ms=+5%", /two rules/],
      ["ttft_p95_ms=fast", /not \+N%, -N%, N%, t-test or off/],
      ["ttft_p95_ms", /not measure=rule/],
      ["ttft_p95_ms=+1%,,*=t-test", /empty rule/],
    ] as [string, RegExp][])
      expect(() => parseRules(bad), bad).toThrow(msg);
    expect(() => parseFailOn("sometimes")).toThrow(RulesError);
    expect(parseFailOn("")).toBe("regression"); // the one default: CLI, Action, service
  });
  it("the gate: measures at every level, measure@level, off; a measure's own rule joins it, off leaves it", () => {
    expect(parseGate(null).text).toBe("output_tok_s, ttft_p95_ms, ttft_p50_ms, error_rate");
    expect(parseGate("output_tok_s, ttft_p95_ms@16, ttft_p95_ms@32").text).toBe(
      "output_tok_s, ttft_p95_ms@16, ttft_p95_ms@32",
    );
    const g = parseGate("ttft_p95_ms@16");
    expect(isGated(g, "ttft_p95_ms", 16)).toBe(true);
    expect(isGated(g, "ttft_p95_ms", 4)).toBe(false);
    expect(isGated(g, "ttft_p95_ms", null)).toBe(false); // the all-levels row is every level's
    expect(parseGate("off").off).toBe(true);
    const joined = parseGate(null, parseRules("itl_p50_ms=+10%, ttft_p50_ms=off"));
    expect(joined.text).toBe("output_tok_s, ttft_p95_ms, error_rate, itl_p50_ms");
    expect(() => parseGate("ttft_p96_ms")).toThrow(/gate: unknown measure "ttft_p96_ms"/);
    expect(() => parseGate("ttft_p95_ms@fast")).toThrow(/not measure@level/);
  });
  it("fail-on: regression fails on the gate only, unjudged also when it could not judge, warning on any row", () => {
    const at = (
      gate: Parameters<typeof fails>[0]["gate"],
      severities: ("regression" | "warning" | "none")[],
    ) => ({
      gate,
      severities,
    });
    expect(fails(at("passed", ["warning"]), "regression")).toBe(false);
    expect(fails(at("failed", ["regression"]), "regression")).toBe(true);
    expect(fails(at("cannot_judge", ["none"]), "regression")).toBe(false);
    expect(fails(at("cannot_judge", ["none"]), "unjudged")).toBe(true);
    expect(fails(at("not_gated", ["warning"]), "unjudged")).toBe(false);
    expect(fails(at("not_gated", ["warning"]), "warning")).toBe(true);
    expect(fails(at("passed", ["none", "none"]), "warning")).toBe(false);
    expect(fails(at("failed", ["regression"]), "never")).toBe(false);
  });
});

describe("the same verdicts in the service's rows and the CLI's", () => {
  // head: TTFT p95 12 % worse, output tok/s 4 % worse, TTFT p50 8 % worse (one run each side)
  const base = example();
  const head = structuredClone(base);
  for (const l of head.levels) {
    l.ttft_ms.p95! *= 1.12;
    l.ttft_ms.p50! *= 1.08;
    l.output_tok_s *= 0.96;
  }
  const rules = parseRules("ttft_p95_ms=+10%, output_tok_s=-5%, *=+5%");
  const pointsOnly = (id: string, d: ResultDocument): Evidence => ({
    kind: "run",
    run: pointsRun(id, documentPoints(d)),
    samples: null,
  });
  const pick = (rows: { measure: string; verdict: string; severity: string; rule: string }[], m: string) => {
    const r = rows.find((x) => x.measure === m)!;
    return [r.verdict, r.severity, r.rule];
  };
  // One run each side cannot gate: a percentage rule's regression is a warning, never the gate's.
  const expected = {
    ttft_p95_ms: ["regressed", "warning", "+10%"],
    output_tok_s: ["unchanged", "none", "-5%"],
    ttft_p50_ms: ["regressed", "warning", "+5%"],
  };
  it("service rows (one baseline run, percentage rules)", () => {
    const s = judgeRuns(pointsOnly("base", base), pointsOnly("head", head), { rules });
    for (const [m, e] of Object.entries(expected)) expect(pick(s.rows, m), m).toEqual(e);
    expect(s.gate.status).toBe("not_gated");
  });
  it("CLI rows (documents without samples): the same", () => {
    const s = compareDocuments(
      [{ id: "base", doc: { ...base, requests: null } }],
      { id: "head", doc: { ...head, requests: null } },
      { rules },
    );
    for (const [m, e] of Object.entries(expected)) expect(pick(s.rows, m), m).toEqual(e);
  });
  it("off: shown, never a regression", () => {
    const off = parseRules("*=off");
    const rows = judgeRuns(pointsOnly("base", base), pointsOnly("head", head), {
      rules: off,
      gate: "off",
    }).rows;
    expect(rows.every((r) => r.severity === "none" && r.rule === "off")).toBe(true);
  });
});
