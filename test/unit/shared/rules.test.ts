/**
 * Thresholds and gating (#12): one syntax, parsed once, the same verdicts wherever they are used.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareDocuments } from "../../../src/core/tools/compare.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { documentPoints } from "../../../src/shared/measures.ts";
import { fails, parseFailOn, parseRules, RulesError } from "../../../src/shared/rules.ts";
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
  it("fail-on: regression fails on own-rule regressions only, warning on any, never on none", () => {
    expect(fails(["warning"], "regression")).toBe(false);
    expect(fails(["regression"], "regression")).toBe(true);
    expect(fails(["warning"], "warning")).toBe(true);
    expect(fails(["none", "none"], "warning")).toBe(false);
    expect(fails(["regression"], "never")).toBe(false);
  });
});

describe("the same verdicts in the service's rows and the CLI's", () => {
  // head: TTFT p95 12 % worse, output tok/s 4 % worse, TTFT p50 8 % worse
  const base = example();
  const head = structuredClone(base);
  for (const l of head.levels) {
    l.ttft_ms.p95! *= 1.12;
    l.ttft_ms.p50! *= 1.08;
    l.output_tok_s *= 0.96;
  }
  const rules = parseRules("ttft_p95_ms=+10%, output_tok_s=-5%, *=+5%");
  const pointsOnly = (d: ResultDocument): Evidence => ({
    runs: [documentPoints(d)],
    samples: null,
    kind: "run",
  });
  const pick = (rows: { measure: string; verdict: string; severity: string; rule: string }[], m: string) => {
    const r = rows.find((x) => x.measure === m)!;
    return [r.verdict, r.severity, r.rule];
  };
  it("service rows (one baseline run, percentage rules)", () => {
    const rows = judgeRuns(pointsOnly(base), pointsOnly(head), { rules }).rows;
    expect(pick(rows, "ttft_p95_ms")).toEqual(["regressed", "regression", "+10%"]);
    expect(pick(rows, "output_tok_s")).toEqual(["unchanged", "none", "-5%"]);
    expect(pick(rows, "ttft_p50_ms")).toEqual(["regressed", "warning", "+5%"]);
  });
  it("CLI rows (documents without samples): the same", () => {
    const rows = compareDocuments([{ ...base, requests: null }], { ...head, requests: null }, { rules }).rows;
    expect(pick(rows, "ttft_p95_ms")).toEqual(["regressed", "regression", "+10%"]);
    expect(pick(rows, "output_tok_s")).toEqual(["unchanged", "none", "-5%"]);
    expect(pick(rows, "ttft_p50_ms")).toEqual(["regressed", "warning", "+5%"]);
  });
  it("off: shown, never a regression", () => {
    const off = parseRules("*=off");
    const rows = judgeRuns(pointsOnly(base), pointsOnly(head), { rules: off }).rows;
    expect(rows.every((r) => r.severity === "none" && r.rule === "off")).toBe(true);
  });
});
