// The one verdict engine: which method the evidence allows, "too noisy to judge", the medians
// of repeats, the headline's words, and its error rates measured over seeded trials.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareDocuments } from "../../../src/core/tools/compare.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import type { Point } from "../../../src/shared/measures.ts";
import { medianLevels, medianOf } from "../../../src/shared/repeats.ts";
import { parseRules } from "../../../src/shared/rules.ts";
import { documentSamples, levelSamples, MAX_SAMPLES, thinned } from "../../../src/shared/samples.ts";
import { type Evidence, judgeRuns } from "../../../src/shared/verdict.ts";
import { headline, measureName, rowPhrase, verdictWord } from "../../../src/shared/verdict-text.ts";
import { trialRates } from "../../helpers/verdict-trials.ts";

const example = (): ResultDocument =>
  parseResultDocument(JSON.parse(readFileSync("schema/examples/closed-sweep.json", "utf8")));
const pt = (value: number, measure = "ttft_p99_ms"): Point => ({
  benchmark: "closed c=4",
  measure,
  value,
  level: 4,
});
const runs = (vals: number[], kind: Evidence["kind"] = "history"): Evidence => ({
  runs: vals.map((v) => [pt(v)]),
  samples: null,
  kind,
});
const one = (base: Evidence, head: Evidence, rules?: string) =>
  judgeRuns(base, head, rules ? { rules: parseRules(rules) } : {}).rows[0]!;

describe("the method follows the evidence", () => {
  const history = [100, 103, 97, 101, 99, 102, 98, 100, 101, 99];
  it("a head with repeats: repeats-t, an interval on the change in % of the base", () => {
    const r = one(runs(history), runs([112, 109, 111, 110, 113], "repeats"));
    expect(r.method).toBe("repeats-t");
    expect(r.head).toBe(111); // the median of the repeats
    expect(r.head_n).toBe(5);
    expect(r.base).toBeCloseTo(100, 6); // the history's mean
    expect(r.interval_pct![0]).toBeGreaterThan(0);
    expect(r.interval_pct![0]).toBeLessThan(r.delta_pct!);
    expect(r.interval_pct![1]).toBeGreaterThan(r.delta_pct!);
    expect(r.verdict).toBe("regressed"); // lower is better for TTFT
    expect(r.severity).toBe("warning"); // judged by the * rule
  });
  it("one head run against 5+ base runs: history-t", () => {
    expect(one(runs(history), runs([101], "run"))).toMatchObject({
      method: "history-t",
      verdict: "unchanged",
    });
    expect(one(runs(history), runs([112], "run"))).toMatchObject({
      method: "history-t",
      verdict: "regressed",
    });
  });
  it("one run each side with per-request samples: the bootstrap; without: percent", () => {
    const base = example();
    const rows = compareDocuments([base], base).rows;
    const sampled = rows.filter((r) => r.method === "bootstrap");
    expect(sampled.length).toBeGreaterThan(0);
    expect(sampled.every((r) => r.interval_pct !== null)).toBe(true);
    const bare = compareDocuments([{ ...base, requests: null }], { ...base, requests: null }).rows;
    expect(bare.every((r) => r.method === "percent" && r.interval_pct === null)).toBe(true);
  });
  it("2-4 base runs: percent, with the runs' own noise as the bar", () => {
    // +6 % beyond the default 5 %, but inside two CVs of a noisy history: not a change
    const r = one(runs([100, 108, 92]), runs([106], "run"));
    expect(r.method).toBe("percent");
    expect(r.noise_pct).toBeCloseTo(8, 0);
    expect(r.verdict).toBe("too_noisy");
    expect(verdictWord(r)).toBe("too noisy to judge (CV 8.0 %)");
    expect(one(runs([100, 100.5, 99.5]), runs([106], "run")).verdict).toBe("regressed");
  });
  it("a measure's own percentage rule gates, and says too noisy when its runs' noise is above it", () => {
    const own = one(runs(history), runs([104], "run"), "ttft_p99_ms=+3%");
    expect(own).toMatchObject({
      method: "percent",
      verdict: "regressed",
      severity: "regression",
      rule: "+3%",
    });
    const noisy = one(runs([100, 130, 70, 110, 90]), runs([102], "run"), "ttft_p99_ms=+10%");
    expect(noisy.verdict).toBe("too_noisy");
  });
  it("an interval wider than the noise limit: too noisy to judge, not unchanged", () => {
    const r = one(runs([100, 140, 60, 120, 80, 130]), runs([105], "run"));
    expect(r.method).toBe("history-t");
    expect(r.verdict).toBe("too_noisy");
    expect(verdictWord(r)).toMatch(/^too noisy to judge \(CV \d+\.\d %\)$/);
  });
  it("off: shown, never judged; no base: no baseline", () => {
    expect(one(runs(history), runs([200], "run"), "*=off")).toMatchObject({
      method: "off",
      verdict: "unchanged",
    });
    expect(one(runs([]), runs([100], "run"))).toMatchObject({ method: "none", verdict: "no_baseline" });
  });
});

describe("repeats and samples", () => {
  it("levels of repeats: each figure's median, counts a whole number, a flag by majority", () => {
    const l = example().levels[0]!;
    const at = (ttft: number, requests: number, steady: boolean) => ({
      ...l,
      requests,
      ttft_ms: { ...l.ttft_ms, p50: ttft },
      steady_state: { ...l.steady_state!, steady },
    });
    const [m] = medianLevels([
      [at(10.5, 8, true)],
      [at(30.5, 9, false)],
      [at(20.5, 12, true)],
      [at(40.5, 11, false)],
    ]);
    expect(m!.ttft_ms.p50).toBe(25.5);
    expect(m!.requests).toBe(10); // 9 and 11: a count stays a count
    expect(m!.steady_state!.steady).toBe(false); // a tie is not "steady"
    expect(medianOf([3, 1, 2])).toBe(2);
  });
  it("samples are the level's own requests, capped and rounded the same way for the file and the service", () => {
    const doc = example();
    const s = levelSamples(doc, doc.levels[0]!.level, "ttft_p50_ms")!;
    expect(s.q).toBe(0.5);
    expect(s.values.length).toBe(
      doc.requests!.filter((r) => r.level === doc.levels[0]!.level && !r.warmup && r.error === null).length,
    );
    const many = Array.from({ length: 5000 }, (_, i) => i + 0.1234567);
    const t = thinned(many);
    expect(t).toHaveLength(MAX_SAMPLES);
    expect(t[1]).toBe(5.12346);
    expect(documentSamples(doc).every((x) => x.values.length > 0)).toBe(true);
  });
});

describe("words", () => {
  it("one headline: regressions named worst first with change and interval, counts of every row", () => {
    const s = judgeRuns(
      { runs: [[pt(100), pt(50, "output_tok_s")]], samples: null, kind: "run" },
      { runs: [[pt(120), pt(50, "output_tok_s")]], samples: null, kind: "run" },
    );
    expect(headline(s.rows)).toBe(
      "1 regressed beyond their threshold: TTFT p99 (ms) at c=4 +20.0 %; 1 unchanged.",
    );
    expect(rowPhrase({ ...s.rows[0]!, interval_pct: [11, 25] })).toBe(
      "TTFT p99 (ms) at c=4 +20.0 % [+11.0, +25.0]",
    );
    expect(measureName("output_tok_s")).toBe("output tok/s");
  });
});

describe("error rates over seeded trials (3 % run-to-run noise on TTFT p99)", () => {
  const SEEDS = [1, 2, 3, 4, 5];
  const pooled = (changePct: number, history: number, repeats: number) => {
    let flagged = 0;
    for (const seed of SEEDS)
      flagged += trialRates({ noisePct: 3, changePct, history, repeats, trials: 200, seed }).flagged;
    return flagged / (200 * SEEDS.length);
  };
  it("a base history of 10 and 5 head repeats: a 10 % regression flagged in >= 95 %, no change in <= 7 %", () => {
    expect(pooled(10, 10, 5)).toBeGreaterThanOrEqual(0.95);
    expect(pooled(0, 10, 5)).toBeLessThanOrEqual(0.07);
  });
  it("one head run and no history: the percent rule misses some and cries wolf often (what it cannot do)", () => {
    // |change| > 5 % with the difference of two runs' noise (3 % × √2 = 4.2 %): about 88 % of a
    // 10 % change seen, and about 24 % of no change flagged.
    const hit = pooled(10, 1, 1);
    const wolf = pooled(0, 1, 1);
    expect(hit).toBeGreaterThan(0.8);
    expect(hit).toBeLessThan(0.95);
    expect(wolf).toBeGreaterThan(0.15);
    expect(wolf).toBeLessThan(0.33);
  });
});
