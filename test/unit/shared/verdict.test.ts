// The one verdict engine: the method each kind of evidence allows (and the unit it counts), what
// breaks never reads "unchanged", what is not valid is not judged, a robust base history, the
// words of the headline.
import { describe, expect, it } from "vitest";
import type { ResultDocument } from "../../../src/schema/v1.ts";
import { compareDocuments } from "../../../src/shared/comparison.ts";
import { pointsRun } from "../../../src/shared/evidence.ts";
import type { Point } from "../../../src/shared/measures.ts";
import { medianLevels, medianOf } from "../../../src/shared/repeats.ts";
import { parseRules } from "../../../src/shared/rules.ts";
import { MAX_SAMPLES, thinned, thinnedGroups } from "../../../src/shared/samples.ts";
import { judgeRuns, type VerdictRow, type VerdictSummary } from "../../../src/shared/verdict.ts";
import {
  failureLine,
  headline,
  measureName,
  rowPhrase,
  verdictWord,
} from "../../../src/shared/verdict-text.ts";
import {
  abDocument,
  DEFAULT_MODEL,
  historyDocuments,
  invalidLevel,
  NO_CHANGE,
  type NoiseModel,
  repeatsDocument,
  rng,
  runDocument,
} from "../../helpers/ci-noise.ts";

const QUIET: NoiseModel = { ...DEFAULT_MODEL, noisePct: 1, jobShare: 0.5, errorRate: 0 };
const row = (s: VerdictSummary, benchmark: string, measure: string): VerdictRow =>
  s.rows.find((r) => r.benchmark === benchmark && r.measure === measure)!;
const side = (id: string, doc: ResultDocument) => ({ id, doc });

describe("the method follows the evidence, and names the unit it counts", () => {
  const r = rng(3);
  it("a base history of jobs: history-t per job, gated; fewer than 5: an interval, not gated", () => {
    const s = compareDocuments(
      historyDocuments(r, QUIET, 10),
      side("head", runDocument(r, QUIET, 0, NO_CHANGE)),
    );
    const t = row(s, "closed c=4", "output_tok_s");
    expect(t).toMatchObject({ method: "history-t", independent: "job", gated: true, base_n: 10 });
    expect(t.interval_pct![0]).toBeLessThan(0);
    expect(t.interval_pct![1]).toBeGreaterThan(0);
    expect(t.detectable).toBeGreaterThan(0);
    expect(s.gate.evidence).toBe("history");
    const short = compareDocuments(
      historyDocuments(r, QUIET, 3),
      side("head", runDocument(r, QUIET, 0, NO_CHANGE)),
    );
    expect(row(short, "closed c=4", "output_tok_s")).toMatchObject({ method: "history-t", base_n: 3 });
    expect(short.gate.status).toBe("not_gated");
    expect(short.gate.reason).toMatch(/3 usable runs, 5 are needed to gate/);
  });
  it("an A/B job: paired per block, gated from its own blocks", () => {
    const s = compareDocuments([], side("head", abDocument(r, QUIET, 4, NO_CHANGE)));
    expect(row(s, "closed c=4", "ttft_p50_ms")).toMatchObject({ method: "ab-paired", independent: "block" });
    expect(s.base_kind).toBe("ab");
    expect(["passed", "failed"]).toContain(s.gate.status);
  });
  it("repeats in two jobs: within-job evidence, never gated", () => {
    const s = compareDocuments(
      [side("base", repeatsDocument(r, QUIET, 3, NO_CHANGE))],
      side("head", repeatsDocument(r, QUIET, 3, NO_CHANGE)),
    );
    expect(row(s, "closed c=4", "output_tok_s")).toMatchObject({
      method: "repeats-t",
      independent: "repeat",
    });
    expect(s.gate.status).toBe("not_gated");
    expect(s.gate.reason).toMatch(/^repeats in one job cannot see what the job shares/);
  });
  it("one run each side: the bootstrap within one run (whole requests), percent where nothing measures noise", () => {
    const s = compareDocuments(
      [side("base", runDocument(r, QUIET, 0, NO_CHANGE))],
      side("head", runDocument(r, QUIET, 0, NO_CHANGE)),
    );
    expect(row(s, "closed c=4", "itl_p50_ms")).toMatchObject({ method: "bootstrap", independent: "request" });
    expect(row(s, "closed c=4", "output_tok_s")).toMatchObject({ method: "percent", independent: null });
    expect(row(s, "closed c=4", "error_rate")).toMatchObject({ method: "exact", independent: "request" });
    expect(s.gate.status).toBe("not_gated");
    expect(s.gate.reason).toMatch(/^one run each side cannot see run-to-run noise/);
  });
});

describe("nothing that breaks reads unchanged", () => {
  const r = rng(5);
  it("error rate 0 → 25 %: +25 points, regressed, and the gate fails even on one run each side", () => {
    const base = runDocument(r, QUIET, 0, NO_CHANGE);
    const head = runDocument(r, { ...QUIET, errorRate: 0.25 }, 0, NO_CHANGE);
    for (const s of [
      compareDocuments([side("base", base)], side("head", head)),
      compareDocuments(historyDocuments(r, QUIET, 10), side("head", head)),
    ]) {
      const e = row(s, "closed c=4", "error_rate");
      expect(e.verdict).toBe("regressed");
      expect(e.delta_pp!).toBeGreaterThan(15);
      expect(e.delta_pct).toBeNull(); // a ratio of a zero base means nothing: points
      expect(s.gate.status).toBe("failed");
      expect(s.gate.failed).toContain("closed c=4\u0000error_rate");
      expect(verdictWord(e)).toBe("regressed");
      expect(rowPhrase(e)).toMatch(/^error rate at c=4 \+\d+\.\d pp \[\+\d+\.\d, \+\d+\.\d\]$/);
    }
  });
  it("a head level where every request failed: its latency rows regress, saying so; the gate fails", () => {
    const base = runDocument(r, QUIET, 0, NO_CHANGE);
    const head = runDocument(r, QUIET, 0, NO_CHANGE);
    const l = head.levels[1]!;
    Object.assign(l, { ok: 0, errors: l.requests, errors_by_code: { http_500: l.requests } });
    for (const k of ["ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "decode_tok_s"] as const)
      l[k] = { n: 0, mean: null, min: null, max: null, p50: null, p90: null, p95: null, p99: null };
    head.samples = head.samples!.filter((x) => x.level !== l.level);
    const s = compareDocuments([side("base", base)], side("head", head));
    expect(row(s, "closed c=4", "ttft_p95_ms")).toMatchObject({
      verdict: "regressed",
      head: null,
      reason: "no value in the head: every request failed",
    });
    expect(s.gate.status).toBe("failed");
  });
  it("zero-variance repeats get the figure's resolution as their floor, not a zero-width interval", () => {
    const pts = (v: number): Point[] => [
      { benchmark: "closed c=4", measure: "ttft_p50_ms", value: v, level: 4 },
    ];
    const reps = (v: number) => ({
      kind: "repeats" as const,
      runs: [1, 2, 3].map((i) => pointsRun(`r${i}`, pts(v))),
    });
    const s = judgeRuns(reps(40), reps(40.6)); // +1.5 %
    const t = s.rows[0]!;
    expect(t.method).toBe("repeats-t");
    expect(t.interval_pct![1] - t.interval_pct![0]).toBeGreaterThan(3); // 1 ms of 40 ms: ±1.25 % at least
    expect(t.verdict).toBe("unchanged");
  });
});

describe("a robust base history", () => {
  it("one slow run in twenty is flagged, not averaged in: a 10 % regression is still caught", () => {
    const r = rng(8);
    const hist = historyDocuments(r, QUIET, 20);
    const slow = hist[7]!.doc;
    for (const l of slow.levels) {
      l.output_tok_s *= 0.6;
      for (const k of ["p50", "p95", "p99"] as const) l.ttft_ms[k]! *= 1.6;
    }
    // slow in every request: its samples too (the service checks them against the figures)
    for (const x of slow.samples ?? [])
      if (x.measure.startsWith("ttft")) x.values = x.values.map((v) => v * 1.6);
    const head = runDocument(r, QUIET, 0, { ttft: 0, tput: 0.1 });
    const s = compareDocuments(hist, side("head", head));
    expect(s.excluded).toContainEqual({ run: "base-7", reason: expect.stringMatching(/^an outlier run/) });
    expect(s.gate.status).toBe("failed");
    expect(row(s, "all levels", "output_tok_s").verdict).toBe("regressed");
  });
  it("runs before the base branch's last change point and runs with no valid level are left out, named; a run's invalid level leaves only its own rows", () => {
    const r = rng(9);
    const hist = historyDocuments(r, QUIET, 14);
    for (const h of hist.slice(0, 7)) for (const l of h.doc.levels) l.output_tok_s *= 0.8; // slower then
    const clientBound = {
      status: "invalid" as const,
      reasons: [
        {
          code: "client_bound" as const,
          affects: ["latency", "rate", "slo"],
          figure: 40,
          bound: 20,
          text: "the client was the bottleneck",
        },
      ],
    };
    for (const l of hist[10]!.doc.levels) l.validity = clientBound;
    hist[10]!.doc.validity = {
      status: "invalid",
      reasons: [{ level: 4, code: "client_bound", text: "the client was the bottleneck" }],
    };
    // one level of another run: that run still counts at the other levels
    hist[11]!.doc.levels.find((l) => l.level === 4)!.validity = clientBound;
    const s = compareDocuments(hist, side("head", runDocument(r, QUIET, 0, NO_CHANGE)));
    const cut = s.excluded.filter((e) => e.reason.startsWith("before the base branch's change"));
    expect(cut.map((e) => e.run)).toEqual([
      "base-0",
      "base-1",
      "base-2",
      "base-3",
      "base-4",
      "base-5",
      "base-6",
    ]);
    expect(s.excluded).toContainEqual({
      run: "base-10",
      reason: "invalid: level 1: the client was the bottleneck",
    });
    expect(s.excluded.map((e) => e.run)).not.toContain("base-11");
    expect(s.base_runs).toBe(6);
    expect(row(s, "closed c=4", "output_tok_s").base_n).toBe(5);
    expect(row(s, "closed c=16", "output_tok_s").base_n).toBe(6);
    expect(row(s, "closed c=4", "output_tok_s").verdict).not.toBe("regressed");
  });
});

describe("not judged: what a level's validity leaves without a verdict", () => {
  const r = rng(11);
  const CLIENT_BOUND = invalidLevel(
    "client_bound",
    "client-bound: it read late by 31 ms at p99, over 10 % of TTFT p50 (41 ms)",
    31,
    4.1,
  );
  it("a head level that was client-bound: its latency and rate rows are not judged, its errors are; the gate cannot judge", () => {
    const head = runDocument(r, QUIET, 0, NO_CHANGE);
    head.levels[2]!.validity = CLIENT_BOUND;
    const s = compareDocuments(historyDocuments(r, QUIET, 10), side("head", head));
    const t = row(s, "closed c=16", "ttft_p95_ms");
    expect(t.verdict).toBe("not_judged");
    expect(verdictWord(t)).toBe(
      "not judged: head client-bound: it read late by 31 ms at p99, over 10 % of TTFT p50 (41 ms)",
    );
    expect(row(s, "closed c=16", "error_rate").verdict).not.toBe("not_judged");
    expect(row(s, "closed c=4", "ttft_p95_ms").verdict).not.toBe("not_judged");
    expect(s.gate.status).toBe("cannot_judge");
  });
  it("a level invalid in every base run: not judged as an invalid head is, so the gate cannot pass it", () => {
    const bound = (doc: ResultDocument): ResultDocument => {
      doc.levels[2]!.validity = CLIENT_BOUND;
      return doc;
    };
    const history = historyDocuments(r, QUIET, 10).map((d) => ({ ...d, doc: bound(d.doc) }));
    const s = compareDocuments(history, side("head", runDocument(r, QUIET, 0, NO_CHANGE)));
    const t = row(s, "closed c=16", "ttft_p95_ms");
    expect(t.verdict).toBe("not_judged");
    expect(verdictWord(t)).toBe(
      "not judged: base client-bound: it read late by 31 ms at p99, over 10 % of TTFT p50 (41 ms) (all 10 runs)",
    );
    expect(row(s, "closed c=4", "ttft_p95_ms").verdict).not.toBe("not_judged");
    expect(s.gate.status).toBe("cannot_judge");
    expect(s.gate.reason).toMatch(/base client-bound at c=16/);
    // the head as short as its base: the head's reason first, as with one base file
    const both = compareDocuments(history, side("head", bound(runDocument(r, QUIET, 0, NO_CHANGE))));
    expect(row(both, "closed c=16", "ttft_p95_ms").reason).toMatch(/^head client-bound/);
    // one valid base run is a baseline again: the level is judged on it
    history[0] = { ...history[0]!, doc: runDocument(r, QUIET, 0, NO_CHANGE) };
    const one = compareDocuments(history, side("head", runDocument(r, QUIET, 0, NO_CHANGE)));
    expect(row(one, "closed c=16", "ttft_p95_ms")).toMatchObject({ base_n: 1 });
    expect(row(one, "closed c=16", "ttft_p95_ms").verdict).not.toBe("not_judged");
  });
  it("a history with no valid level at all: not judged on it, not 'no baseline', and its errors still count", () => {
    const history = historyDocuments(r, QUIET, 10).map((d) => {
      for (const l of d.doc.levels)
        l.validity = invalidLevel("no_steady_state", "no steady state: 0.2 s", 0.2, 1);
      return d;
    });
    const s = compareDocuments(history, side("head", runDocument(r, QUIET, 0, NO_CHANGE)));
    expect(s.rows.filter((x) => x.gated && x.verdict === "no_baseline")).toEqual([]);
    expect(row(s, "closed c=1", "ttft_p95_ms").reason).toBe("base no steady state: 0.2 s (all 10 runs)");
    expect(row(s, "closed c=1", "error_rate").verdict).not.toBe("not_judged");
    expect(s.gate.status).toBe("cannot_judge");
  });
  it("finish reasons that moved by more than 10 points: the level's rows are not judged", () => {
    const base = runDocument(r, QUIET, 0, NO_CHANGE);
    const head = runDocument(r, QUIET, 0, NO_CHANGE);
    head.levels[0]!.finish_reasons = { stop: 100, length: 20 };
    const s = compareDocuments([side("base", base)], side("head", head));
    expect(row(s, "closed c=1", "ttft_p50_ms")).toMatchObject({
      verdict: "not_judged",
      reason: "finish reasons differ: length 100 % → stop 83 %, length 17 %",
    });
  });
});

describe("one identity: another workload is no baseline, a level on one side has none", () => {
  const r = rng(13);
  it("another max_tokens: no baseline at all, the field named; a level only the head ran: a row without one", () => {
    const withConfig = (doc: ResultDocument, maxTokens: number, levels: number[]): ResultDocument => ({
      ...doc,
      config: {
        ...(JSON.parse(JSON.stringify(doc.config ?? {})) as object),
        mode: "closed",
        levels,
        max_tokens: maxTokens,
      } as ResultDocument["config"],
    });
    const base = withConfig(runDocument(r, QUIET, 0, NO_CHANGE), 64, [1, 4, 16]);
    const head = withConfig(runDocument(r, QUIET, 0, NO_CHANGE), 128, [1, 4, 16]);
    const other = compareDocuments([side("base", base)], side("head", head));
    expect(other.counts.no_baseline).toBe(other.rows.length);
    expect(headline(other)).toBe("No baseline: the base measured another workload (max_tokens 64 vs 128).");
    const fewer = {
      ...base,
      config: { ...base.config!, max_tokens: 128, levels: [1, 4] },
      levels: base.levels.slice(0, 2),
    };
    const s = compareDocuments([side("base", fewer)], side("head", head));
    expect(row(s, "closed c=16", "ttft_p50_ms").verdict).toBe("no_baseline");
    expect(row(s, "closed c=4", "ttft_p50_ms").verdict).not.toBe("no_baseline");
  });
});

describe("words", () => {
  it("the headline names each gated measure that failed once, in the gate's order, then counts the others", () => {
    const r = rng(17);
    const s = compareDocuments(
      historyDocuments(r, QUIET, 10),
      side("head", runDocument(r, QUIET, 0, { ttft: 0.3, tput: 0.2 })),
    );
    const h = headline(s);
    // throughput, then TTFT p95, then TTFT p50: each by its all-levels row, never by a level's too
    expect(h).toMatch(
      /^Gate failed: output tok\/s over all levels −\d+\.\d % \[−\d+\.\d, −\d+\.\d\], TTFT p95 \(ms\) over all levels \+\d+\.\d % \[[^\]]+\], TTFT p50 \(ms\) over all levels \+\d+\.\d % \[[^\]]+\] regressed; \d+ other rows in the details\.$/,
    );
    // the same change measured again names the same measures in the same words
    const again = headline(
      compareDocuments(
        historyDocuments(rng(18), QUIET, 10),
        side("head", runDocument(rng(18), QUIET, 0, { ttft: 0.3, tput: 0.2 })),
      ),
    );
    const names = (x: string) => x.replace(/[−+]\d+\.\d %|\[[^\]]+\]|\d+ other/g, "");
    expect(names(again)).toBe(names(h));
    expect(rowPhrase({ ...s.rows[0]!, interval_pct: [11, 25], delta_pct: 20, delta_pp: null })).toMatch(
      /^TTFT p50 \(ms\) at c=1 \+20\.0 % \[\+11\.0, \+25\.0\]$/,
    );
    expect(measureName("output_tok_s")).toBe("output tok/s");
    expect(measureName("error_rate")).toBe("error rate");
  });
  it("a check failed by warnings names the rows that failed it, not only a gate that held", () => {
    const r = rng(23);
    // the gate on the error rate alone: a slower head moves every other row, which only warn
    const s = compareDocuments(
      historyDocuments(r, QUIET, 10),
      side("head", runDocument(r, QUIET, 0, { ttft: 0.5, tput: 0.3 })),
      { gate: "error_rate" },
    );
    expect(s.gate.status).toBe("passed");
    const warned = s.rows.filter((x) => x.severity === "warning");
    expect(warned.length).toBeGreaterThan(3);
    const line = failureLine(s, "warning");
    expect(line).toMatch(
      /^Gate passed: no gated row regressed .* It fails on warnings: \d+ rows of \d+ measures regressed: /,
    );
    expect(line).toContain(`${warned.length} rows of`);
    // a gate of share rows only: what it could detect in points, not in percent
    expect(line).toMatch(/\(3 rows; each could detect ≥ \d+\.\d(–\d+\.\d)? pp\)/);
    // each named by its all-levels row, the one that averages its levels
    expect(line).toMatch(/regressed: [^:]+ over all levels [−+]\d/);
    expect(line).toMatch(/\(fail-on: warning; gate passed\)$/);
    // a failed gate is its own reason: its headline, nothing added
    const failed = compareDocuments(
      historyDocuments(rng(17), QUIET, 10),
      side("head", runDocument(rng(17), QUIET, 0, { ttft: 0.3, tput: 0.2 })),
    );
    expect(failureLine(failed, "warning")).toBe(`${headline(failed)} (fail-on: warning)`);
  });
  it("a percentage rule on a gated measure is its smallest change; off takes it out of the gate", () => {
    const r = rng(19);
    const hist = historyDocuments(r, QUIET, 10);
    const head = runDocument(r, QUIET, 0, { ttft: 0.06, tput: 0 });
    const strict = compareDocuments(hist, side("head", head), { rules: parseRules("ttft_p50_ms=+20%") });
    expect(row(strict, "all levels", "ttft_p50_ms")).toMatchObject({ rule: "+20%", gated: true });
    expect(row(strict, "all levels", "ttft_p50_ms").verdict).not.toBe("regressed");
    const off = compareDocuments(hist, side("head", head), { rules: parseRules("ttft_p50_ms=off") });
    expect(row(off, "all levels", "ttft_p50_ms")).toMatchObject({ method: "off", gated: false });
  });
});

describe("repeats and samples", () => {
  it("levels of repeats: each figure's median, counts a whole number, a flag by majority", () => {
    const l = runDocument(rng(1), QUIET, 0, NO_CHANGE).levels[0]!;
    const at = (ttft: number, requests: number) => ({ ...l, requests, ttft_ms: { ...l.ttft_ms, p50: ttft } });
    const [m] = medianLevels([[at(10.5, 8)], [at(30.5, 9)], [at(20.5, 12)], [at(40.5, 11)]]);
    expect(m!.ttft_ms.p50).toBe(25.5);
    expect(m!.requests).toBe(10); // 9 and 11: a count stays a count
    expect(medianOf([3, 1, 2])).toBe(2);
  });
  it("samples are capped and rounded the same way for the file and the service; a request's gaps stay together", () => {
    const t = thinned(Array.from({ length: 5000 }, (_, i) => i + 0.1234567));
    expect(t).toHaveLength(MAX_SAMPLES);
    expect(t[1]).toBe(5.12346);
    const g = thinnedGroups(
      Array.from({ length: 300 }, (_, i) => Array.from({ length: 50 }, (_, k) => i * 100 + k)),
    );
    expect(g.values.length).toBeLessThanOrEqual(MAX_SAMPLES);
    expect(g.sizes.reduce((a, b) => a + b, 0)).toBe(g.values.length);
    expect(g.sizes.every((n) => n === g.sizes[0])).toBe(true);
    // every kept value of one group comes from one request
    let i = 0;
    for (const n of g.sizes) {
      const req = Math.floor(g.values[i]! / 100);
      expect(g.values.slice(i, i + n).every((v) => Math.floor(v / 100) === req)).toBe(true);
      i += n;
    }
  });
});
