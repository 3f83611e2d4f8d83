// Why a row moved: the parts of TTFT are no rows of their own; they hang on TTFT's row, each
// side's from the runs its figure came from, and are said with the dominant part and any rest.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { renderComment } from "../../../src/action/comment.ts";
import type { ResultDocument } from "../../../src/schema/v1.ts";
import { pointsRun } from "../../../src/shared/evidence.ts";
import type { Point } from "../../../src/shared/measures.ts";
import { dominantPart, splitSource, splitText, whyLines } from "../../../src/shared/row-splits.ts";
import { judgeRuns } from "../../../src/shared/verdict.ts";
import { headline, rowLabel } from "../../../src/shared/verdict-text.ts";
import { pairVerdict } from "../../helpers/verdict.ts";

const GOLDEN = resolve(import.meta.dirname, "../../../schema/examples/closed-sweep.json");

const B = "closed c=16";
const pts = (ttft: number, parts: [number, number, number] | null, tok = 1000): Point[] => [
  { benchmark: B, measure: "ttft_p95_ms", value: ttft, level: 16 },
  { benchmark: B, measure: "output_tok_s", value: tok, level: 16 },
  ...(parts === null
    ? []
    : (["queue", "prefill", "client"] as const).map((p, i) => ({
        benchmark: B,
        measure: `ttft_p95_${p}_ms`,
        value: parts[i]!,
        level: 16,
      }))),
];

describe("the split of a row", () => {
  it("is no row of its own; TTFT's row carries each side's parts, and the line names the dominant one", () => {
    const v = pairVerdict(pts(134, [100, 30, 4]), pts(100, [71, 26, 3]));
    expect(v.summary.rows.some((r) => r.measure.startsWith("ttft_p95_") && r.measure !== "ttft_p95_ms")).toBe(
      false,
    );
    const row = v.summary.rows.find((r) => r.measure === "ttft_p95_ms")!;
    expect(row.split).toEqual([
      { part: "ttft_p95_queue_ms", base: 71, head: 100 },
      { part: "ttft_p95_prefill_ms", base: 26, head: 30 },
      { part: "ttft_p95_client_ms", base: 3, head: 4 },
    ]);
    expect(splitText(row, rowLabel(row))).toBe(
      "TTFT p95 at c=16 +34.0 ms: queue +29.0, prefill +4.0, client +1.0 (mostly queue)",
    );
  });

  it("says the rest when means over runs do not sum to the row's figures, and names no part under half the change", () => {
    const row = {
      base: 100,
      head: 110,
      split: [
        { part: "ttft_p95_queue_ms", base: 60, head: 64 },
        { part: "ttft_p95_prefill_ms", base: 30, head: 33 },
        { part: "ttft_p95_client_ms", base: 10, head: 10 },
      ],
    };
    expect(splitText(row, "TTFT p95 at c=16")).toBe(
      "TTFT p95 at c=16 +10.0 ms: queue +4.0, prefill +3.0, client ±0.0, rest +3.0",
    );
  });

  it("a history's parts are the mean of the runs the row's base came from", () => {
    const base = [
      pts(100, [70, 27, 3]),
      pts(102, [72, 27, 3]),
      pts(98, [68, 27, 3]),
      pts(101, [71, 27, 3]),
      pts(99, [69, 27, 3]),
    ];
    const s = judgeRuns(
      { kind: "history", runs: base.map((p, i) => pointsRun(`b${i}`, p)) },
      { kind: "run", run: pointsRun("head", pts(160, [130, 27, 3])), samples: null },
    );
    const row = s.rows.find((r) => r.measure === "ttft_p95_ms")!;
    expect(row.verdict).toBe("regressed");
    expect(row.split![0]).toEqual({ part: "ttft_p95_queue_ms", base: 70, head: 130 });
    expect(whyLines(s.rows, rowLabel)[0]).toMatch(
      /^TTFT p95 at c=16 \+60\.\d ms: queue \+60\.0, prefill ±0\.0, client ±0\.0.*\(mostly queue\)$/,
    );
  });

  it("a moved TTFT with no parts on either side: one line that it cannot be split; none when nothing moved", () => {
    const moved = pairVerdict(pts(150, null), pts(100, null));
    expect(whyLines(moved.summary.rows, rowLabel)).toEqual([
      expect.stringMatching(
        /^cannot split: the server gave no prompt time of its own in its streams .* and no phase histograms on \/metrics/,
      ),
    ]);
    const still = pairVerdict(pts(100, [70, 27, 3]), pts(100, [70, 27, 3]));
    expect(whyLines(still.summary.rows, rowLabel)).toEqual([]);
  });

  it("the comment says it under the table", () => {
    const v = pairVerdict(pts(134, [100, 30, 4]), pts(100, [71, 26, 3]));
    const md = renderComment({
      doc: JSON.parse(readFileSync(GOLDEN, "utf8")) as ResultDocument,
      testbed: "tb",
      verdict: v,
      baseBranch: "main",
      links: {},
    });
    expect(md).toContain("**Why it moved**");
    expect(md).toContain("from the server's own prompt time per request");
    expect(md).not.toContain("the server's means");
    expect(md).toContain(
      "- TTFT p95 at c=16 &#43;34.0 ms: queue &#43;29.0, prefill &#43;4.0, client &#43;1.0 &#40;mostly queue&#41;",
    );
  });

  /** TTFT and E2E p95 with the server's /metrics means (queue, prefill, decode), optionally its per-request parts too. */
  const withMeans = (
    ttft: number,
    e2e: number,
    means: [number, number, number],
    parts: [number, number, number] | null,
  ) => [
    ...pts(ttft, parts),
    { benchmark: B, measure: "e2e_p95_ms", value: e2e, level: 16 },
    ...(["queue", "prefill", "decode"] as const).map((p, i) => ({
      benchmark: B,
      measure: `server_mean_${p}_ms`,
      value: means[i]!,
      level: 16,
    })),
  ];

  it("without per-request timings: TTFT and E2E rows explained by the server's /metrics means, said as means with the rest", () => {
    const v = pairVerdict(withMeans(140, 700, [60, 30, 500], null), withMeans(100, 600, [25, 30, 420], null));
    for (const m of ["server_mean_queue_ms", "server_mean_prefill_ms", "server_mean_decode_ms"])
      expect(v.summary.rows.some((r) => r.measure === m)).toBe(false);
    const ttft = v.summary.rows.find((r) => r.measure === "ttft_p95_ms")!;
    expect(ttft.split_source).toBe("metrics");
    // the headline's gated TTFT row carries its dominant part
    expect(headline(v.summary)).toMatch(/TTFT p95 \(ms\) at c=16 \+40\.0 % \(mostly queue\) regressed/);
    expect(ttft.split).toEqual([
      { part: "server_mean_queue_ms", base: 25, head: 60 },
      { part: "server_mean_prefill_ms", base: 30, head: 30 },
    ]);
    expect(splitText(ttft, rowLabel(ttft))).toBe(
      "TTFT p95 at c=16 +40.0 ms; the server's means: queue +35.0, prefill ±0.0, rest +5.0 (mostly queue)",
    );
    const e2e = v.summary.rows.find((r) => r.measure === "e2e_p95_ms")!;
    expect(e2e.split!.map((p) => p.part)).toEqual([
      "server_mean_queue_ms",
      "server_mean_prefill_ms",
      "server_mean_decode_ms",
    ]);
    expect(dominantPart(e2e)).toBe("decode");
    expect(splitSource(v.summary.rows)).toMatch(/^the server's means: its own mean time per phase/);
  });

  it("means name the part that holds most of what they explain, though a percentile moves more than a mean", () => {
    const row = {
      base: 100,
      head: 200,
      split_source: "metrics" as const,
      split: [
        { part: "server_mean_queue_ms", base: 2, head: 50 },
        { part: "server_mean_prefill_ms", base: 20, head: 22 },
      ],
    };
    expect(splitText(row, "TTFT p95 at c=4")).toBe(
      "TTFT p95 at c=4 +100.0 ms; the server's means: queue +48.0, prefill +2.0, rest +50.0 (mostly queue)",
    );
    // the same figures as per-request parts: the queue holds under half the change, so none is named
    expect(dominantPart({ ...row, split_source: "server_timings" })).toBeNull();
  });

  it("per-request parts come first where both sides have them; the E2E row still takes the means", () => {
    const v = pairVerdict(
      withMeans(134, 700, [60, 30, 500], [100, 30, 4]),
      withMeans(100, 600, [25, 30, 420], [71, 26, 3]),
    );
    const ttft = v.summary.rows.find((r) => r.measure === "ttft_p95_ms")!;
    expect(ttft.split_source).toBe("server_timings");
    expect(ttft.split![0]!.part).toBe("ttft_p95_queue_ms");
    expect(v.summary.rows.find((r) => r.measure === "e2e_p95_ms")!.split_source).toBe("metrics");
    // both sources said once each above the lines
    expect(splitSource(v.summary.rows).split("; the server's means").length).toBe(2);
  });
});
