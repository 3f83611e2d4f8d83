// The curve verdict end to end: `sweep --ab-base-url` alternates a base mock and a head mock in
// blocks, and `compare` judges the one document. The mocks decode slower with more running
// requests (ITL = a + b·c); the head has 10 % less capacity in the exact sense that it decodes at
// c users as the base does at c / 0.9 (ITL 2 + 2.22·c against 2 + 2·c, ms). At any speed per user
// it then serves 0.9 × the users, each at the base's rate: 10 % less throughput along the whole
// curve, which is straight in the speed per user here (so the lines between levels are exact).
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseResultDocument } from "../../../src/schema/v1.ts";
import type { VerdictRow } from "../../../src/shared/verdict.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tokenbench-curve-"));
const WORKLOAD = [
  "--levels",
  "1,2,4,8",
  "--requests",
  "32",
  "--max-tokens",
  "24",
  "--ab-pairs",
  "3",
  "--quiet",
  "--client-late-floor-ms",
  "60",
];
/** ITL = itlMs · (1 + g · (running − 1)) = a + b·c with a = itlMs (1 − g), b = itlMs · g. */
const BASE = { ttftMs: 2, itlMs: 4, itlGrowthPerRunning: 0.5, capacity: 64 };
const LESS = { ttftMs: 2, itlMs: 4 * (1 + 0.5 / 9), itlGrowthPerRunning: 0.5 / (0.9 + 0.05), capacity: 64 };

describe("the curve verdict, from an A/B job", () => {
  let base: MockProcess;
  let less: MockProcess;
  let same: MockProcess;
  beforeAll(async () => {
    [base, less, same] = await Promise.all([startMock(BASE), startMock(LESS), startMock(BASE)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([base?.close(), less?.close(), same?.close()]);
  });

  const judged = async (name: string, head: MockProcess) => {
    const out = join(dir, `${name}.json`);
    const r = await runCli(
      ["sweep", "--base-url", head.url, "--ab-base-url", base.url, ...WORKLOAD, "--out", out],
      {
        timeoutMs: 240_000,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    const c = await runCli(["compare", out, "--format", "json"]);
    const s = JSON.parse(c.stdout) as { rows: VerdictRow[]; gate: { status: string; failed: string[] } };
    const rows = s.rows.filter((x) => x.benchmark.startsWith("frontier"));
    const busy = (doc.validity?.reasons ?? []).some((x) => x.code === "client_bound");
    return { s, rows, mean: rows.find((x) => !x.benchmark.includes(" point ")), busy };
  };

  it("10 % less capacity: −10 % along the frontier, within its interval, and the gate fails on it", async () => {
    const { s, mean, busy } = await judged("less", less);
    // On a machine so busy that the client read late, levels are client-bound and not judged
    // (a curve needs two valid levels on every block): the document says so, and that is all
    // this run can show.
    if (!mean) {
      expect(busy).toBe(true);
      return;
    }
    expect(mean).toMatchObject({ measure: "output_tok_s", method: "ab-paired", gated: true });
    expect(mean.delta_pct!).toBeGreaterThan(-13);
    expect(mean.delta_pct!).toBeLessThan(-7);
    expect(mean.interval_pct![0]).toBeLessThan(mean.delta_pct!);
    expect(mean.interval_pct![1]).toBeGreaterThan(mean.delta_pct!);
    // −10 % lies within the interval, give or take the interval's own rounding of a point
    expect(mean.interval_pct![0]).toBeLessThanOrEqual(-10 + 1);
    expect(mean.interval_pct![1]).toBeGreaterThanOrEqual(-10 - 1);
    expect(mean.verdict).toBe("regressed");
    expect(s.gate.failed).toContain(`${mean.benchmark}\u0000output_tok_s`);
  }, 300_000);

  it("the same server on both sides: no regression on the curve", async () => {
    const { mean, busy } = await judged("same", same);
    if (!mean) {
      expect(busy).toBe(true);
      return;
    }
    expect(mean.verdict).not.toBe("regressed");
    expect(Math.abs(mean.delta_pct!)).toBeLessThan(5);
  }, 300_000);
});
