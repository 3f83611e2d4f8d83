// The verdict engine's error rates and what a p99 gate needs. Part 1 measures the run-to-run noise
// of TTFT p99 on the mock with injected noise (an exponential TTFT tail, mean 5 ms over 20 ms,
// another seed per run: 8 sweeps through the CLI at c=4, of 100 and of 400 requests). Part 2 runs
// the engine over seeded trials (200 each, shared with the test suite) at those noises and others:
// how often a 10 % p99 regression is flagged and how often no change is, by evidence (a base
// history of 10 with 1-10 head repeats; one run against one run). It prints, per noise, the fewest
// repeats that flag >= 95 % of 10 % regressions and <= 7 % of no change (the test's targets).
// Usage: npm run build && npx tsx bench/verdict.ts [--quick]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ResultDocument } from "../src/schema/v1.ts";
import { mean, stddev } from "../src/shared/statistics.ts";
import { trialRates } from "../test/helpers/verdict-trials.ts";
import { f, ROOT, spawnMock } from "./lib.ts";

const quick = process.argv.includes("--quick");
const RUNS = quick ? 4 : 8;
const dir = mkdtempSync(join(tmpdir(), "tb-bench-verdict-"));
async function measure(requests: number): Promise<{ p99s: number[]; cv: number }> {
  const p99s: number[] = [];
  for (let seed = 1; seed <= RUNS; seed++) {
    const mock = await spawnMock([
      "--ttft-ms",
      "20",
      "--ttft-jitter-ms",
      "5",
      "--itl-ms",
      "2",
      "--seed",
      String(seed),
    ]);
    const out = join(dir, `run-${requests}-${seed}.json`);
    const r = spawnSync(
      process.execPath,
      [
        resolve(ROOT, "bin/tokenbench.js"),
        "sweep",
        ...["--base-url", mock.url, "--levels", "4", "--requests", String(requests), "--max-tokens", "8"],
        ...["--quiet", "--out", out],
      ],
      { encoding: "utf8" },
    );
    await mock.stop();
    if (r.status !== 0) throw new Error(`sweep failed: ${r.stderr}`);
    p99s.push((JSON.parse(readFileSync(out, "utf8")) as ResultDocument).levels[0]!.ttft_ms.p99!);
  }
  const cv = (100 * stddev(p99s)) / mean(p99s);
  console.log(
    `TTFT p99 of ${requests} requests over ${RUNS} runs (ms): ${p99s.map((x) => f(x, 2)).join(", ")}; CV ${f(cv, 1)} %`,
  );
  return { p99s, cv };
}
const measured = { r100: await measure(100), r400: await measure(400) };

const trials = quick ? 100 : 200;
const rate = (noisePct: number, changePct: number, history: number, repeats: number) =>
  trialRates({ noisePct, changePct, history, repeats, trials, seed: 11 }).rate;
const table: Record<string, unknown>[] = [];
const mCvs = [measured.r100.cv, measured.r400.cv].map((c) => Number(c.toFixed(1)));
const cvs = [...new Set([...mCvs, 2, 3, 5])].sort((a, b) => a - b);
console.log("\nnoise CV | evidence | 10 % regression flagged | no change flagged");
for (const cv of cvs) {
  const one = { hit: rate(cv, 10, 1, 1), wolf: rate(cv, 0, 1, 1) };
  console.log(
    `${f(cv, 1)} % | one run vs one run (percent) | ${f(100 * one.hit, 1)} % | ${f(100 * one.wolf, 1)} %`,
  );
  const hist = { hit: rate(cv, 10, 10, 1), wolf: rate(cv, 0, 10, 1) };
  console.log(
    `${f(cv, 1)} % | history of 10, one head run (history-t) | ${f(100 * hist.hit, 1)} % | ${f(100 * hist.wolf, 1)} %`,
  );
  let needed: number | null = null;
  for (const n of [3, 5, 8, 10]) {
    const hit = rate(cv, 10, 10, n);
    const wolf = rate(cv, 0, 10, n);
    console.log(
      `${f(cv, 1)} % | history of 10, ${n} head repeats (repeats-t) | ${f(100 * hit, 1)} % | ${f(100 * wolf, 1)} %`,
    );
    if (needed === null && hit >= 0.95 && wolf <= 0.07) needed = n;
  }
  table.push({ cv_pct: cv, one_run: one, history_t: hist, repeats_needed: needed });
}
for (const [requests, cv] of [
  [100, mCvs[0]!],
  [400, mCvs[1]!],
] as const) {
  const n = table.find((t) => t.cv_pct === cv)!.repeats_needed;
  console.log(
    `TTFT p99 of ${requests} requests (noise ${f(cv, 1)} %): ${n === null ? "more than 10 head repeats" : `${n} head repeats`} for a 10 % gate (history of 10)`,
  );
}
console.log(
  JSON.stringify({
    bench: "verdict",
    p99_cv_pct: { requests_100: measured.r100.cv, requests_400: measured.r400.cv },
    trials,
    table,
  }),
);
