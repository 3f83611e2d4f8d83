// The gate per pull request. Part 1: the CI-noise model (test/helpers/ci-noise.ts: a job effect
// shared by everything in a job, per-repeat noise, drift within a run, skewed requests, a request's
// gaps moving together, rare errors) as whole documents of 3 levels × every measure, judged by the
// one engine: per cell (testbed noise 1/3/10 %, job effect 0/50/80 % of the variance, evidence: one
// run each side, a history of 5/10/30 jobs, 3/5 repeats per side, A/B with 3/5 pairs) the share of
// unchanged PRs whose gate fails (false-fail) and that carry any flagged row, and the share of PRs
// whose gate fails for a 5/10/20 % regression of output tok/s or TTFT (power). Part 2: real sweeps of
// one unchanged mock under load (two busy loops beside it), every pair, one run against one run
// and as a history. Usage: npm run build && npx tsx bench/verdict.ts [--quick] [--trials N]
//   [--power-trials N] [--skip-real | --real-only] (cells run in two processes, one per core)
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ResultDocument } from "../src/schema/v1.ts";
import { compareDocuments } from "../src/shared/comparison.ts";
import { DEFAULT_MODEL } from "../test/helpers/ci-noise.ts";
import { type CellRates, cellRates, type EvidenceKind, REGRESSIONS } from "../test/helpers/gate-trials.ts";
import { f, ROOT, spawnMock, verdict } from "./lib.ts";

const { values: a } = parseArgs({
  options: {
    quick: { type: "boolean" },
    trials: { type: "string" },
    "power-trials": { type: "string" },
    part: { type: "string" },
    "skip-real": { type: "boolean" },
    "real-only": { type: "boolean" },
  },
});
const quick = a.quick ?? false;
const TRIALS = Number(a.trials ?? (quick ? 60 : 300));
const POWER_TRIALS = Number(a["power-trials"] ?? (quick ? 30 : 80));
const NOISES = [1, 3, 10];
const SHARES = [0, 0.5, 0.8];
const KINDS: EvidenceKind[] = [
  "one",
  "history 5",
  "history 10",
  "history 30",
  "repeats 3",
  "repeats 5",
  "ab 3",
  "ab 5",
];
const CELLS = NOISES.flatMap((noisePct) =>
  SHARES.flatMap((jobShare) => KINDS.map((kind) => ({ noisePct, jobShare, kind }))),
);

interface Cell {
  noisePct: number;
  jobShare: number;
  kind: EvidenceKind;
  nul: CellRates;
  pow: CellRates;
}

function runCells(part: number, of: number): Cell[] {
  return CELLS.filter((_, i) => i % of === part).map((c, i) => {
    const m = { ...DEFAULT_MODEL, noisePct: c.noisePct, jobShare: c.jobShare };
    const seed = 1000 + 97 * CELLS.indexOf(c) + i;
    // One run each side: the bootstrap's informational rows only (the gate cannot fail on them).
    const iterations = c.kind === "one" ? 300 : 1000;
    return {
      ...c,
      nul: cellRates(m, c.kind, { trials: TRIALS, seed, regressions: [], iterations }),
      pow: cellRates(m, c.kind, { trials: POWER_TRIALS, seed: seed + 7, iterations }),
    };
  });
}

if (a.part) {
  const [i, n] = a.part.split("/").map(Number) as [number, number];
  process.stdout.write(`${JSON.stringify(runCells(i, n))}\n`);
  process.exit(0);
}

// Part 1, in two processes (one per core).
const t0 = Date.now();
const parts = a["real-only"]
  ? []
  : await Promise.all(
      [0, 1].map(
        (i) =>
          new Promise<Cell[]>((res, rej) => {
            const p = spawn(
              process.execPath,
              [
                "--import",
                "tsx",
                resolve(import.meta.dirname, "verdict.ts"),
                "--part",
                `${i}/2`,
                "--trials",
                String(TRIALS),
                "--power-trials",
                String(POWER_TRIALS),
              ],
              { stdio: ["ignore", "pipe", "inherit"] },
            );
            let out = "";
            p.stdout.on("data", (d: Buffer) => {
              out += d.toString();
            });
            p.on("exit", (code) =>
              code === 0 ? res(JSON.parse(out) as Cell[]) : rej(new Error(`part ${i} exited ${code}`)),
            );
          }),
      ),
    );
const cells = parts.flat();
const pct = (x: number, n: number) => `${f((100 * x) / n, 1)} %`;
if (cells.length > 0) {
  console.log(
    `Part 1: the CI-noise model, ${TRIALS} unchanged PRs and ${POWER_TRIALS} PRs per regression per cell (${((Date.now() - t0) / 60000).toFixed(1)} min)\n`,
  );
  console.log(
    "noise | job share | evidence | gate false-fail | any row flagged | power: tput −5/−10/−20 % | TTFT +5/+10/+20 %",
  );
  for (const c of cells.sort(
    (x, y) =>
      x.noisePct - y.noisePct || x.jobShare - y.jobShare || KINDS.indexOf(x.kind) - KINDS.indexOf(y.kind),
  )) {
    const p = (name: string) => f((100 * c.pow.power[name]!) / c.pow.trials, 0);
    console.log(
      `${c.noisePct} % | ${100 * c.jobShare} % | ${c.kind} | ${pct(c.nul.falseFail, c.nul.trials)} | ${pct(c.nul.anyFlagged, c.nul.trials)} | ${p("output tok/s −5 %")} / ${p("output tok/s −10 %")} / ${p("output tok/s −20 %")} | ${p("TTFT +5 %")} / ${p("TTFT +10 %")} / ${p("TTFT +20 %")}`,
    );
  }
  // Per gated measure, for a 10 % regression: PRs whose gate failed on a row of that measure, and the
  // ceiling (that measure's all-levels row alone, one-sided 5 %: what no gate holding its rate over
  // more rows can beat).
  console.log(
    "\nPer gated measure, 10 % regressions (gate failed on that measure's rows / the one-row ceiling):",
  );
  console.log("noise | job share | evidence | output tok/s −10 % | TTFT p50 +10 % | TTFT p95 +10 %");
  const by = (c: Cell, reg: string, m: string) =>
    `${f((100 * c.pow.powerBy[reg]![m]!) / c.pow.trials, 0)} / ${f((100 * c.pow.ceiling[reg]![m]!) / c.pow.trials, 0)}`;
  for (const c of cells.filter((x) => x.kind !== "one" && !x.kind.startsWith("repeats")))
    console.log(
      `${c.noisePct} % | ${100 * c.jobShare} % | ${c.kind} | ${by(c, "output tok/s −10 %", "output_tok_s")} | ${by(c, "TTFT +10 %", "ttft_p50_ms")} | ${by(c, "TTFT +10 %", "ttft_p95_ms")}`,
    );

  // The targets: false-fail at most 5 % in every cell (within two binomial SEs of the trials), one
  // run each side never failing on noise, power ≥ 90 % for a 10 % regression of output tok/s and
  // TTFT p50 at 3 % noise with a history of 10+ jobs or A/B with 3+ pairs, and which evidence
  // reaches 80 % for TTFT p95.
  const worst = cells.reduce((w, c) =>
    c.nul.falseFail / c.nul.trials > w.nul.falseFail / w.nul.trials ? c : w,
  );
  const worstRate = worst.nul.falseFail / worst.nul.trials;
  const se5 = Math.sqrt((0.05 * 0.95) / worst.nul.trials);
  const oneFails = cells.filter((c) => c.kind === "one").reduce((s, c) => s + c.nul.falseFail, 0);
  const pooled = cells.reduce((s, c) => s + c.nul.falseFail, 0) / cells.reduce((s, c) => s + c.nul.trials, 0);
  console.log(
    `\nfalse-fail per unchanged PR: worst cell ${pct(worst.nul.falseFail, worst.nul.trials)} (${worst.kind}, ${worst.noisePct} % noise, job share ${worst.jobShare}; the binomial SE at 5 % is ${f(100 * se5, 1)} points over ${worst.nul.trials} PRs), all cells pooled ${f(100 * pooled, 2)} %: ${verdict(worstRate <= 0.05 + 2 * se5)}`,
  );
  console.log(
    `one run each side, gate failed on noise: ${oneFails} of ${TRIALS * NOISES.length * SHARES.length}: ${verdict(oneFails === 0)}`,
  );
  const at3 = cells.filter(
    (c) => c.noisePct === 3 && (/^history (10|30)$/.test(c.kind) || /^ab [35]$/.test(c.kind)),
  );
  for (const [reg, m] of [
    ["output tok/s −10 %", "output_tok_s"],
    ["TTFT +10 %", "ttft_p50_ms"],
  ] as const) {
    const lows = at3.filter((c) => c.pow.powerBy[reg]![m]! / c.pow.trials < 0.9);
    console.log(
      `power ≥ 90 % for ${reg} (${m} rows), 3 % noise, history 10+/A/B 3+: ${verdict(lows.length === 0)}${lows.length > 0 ? ` (below in ${lows.map((c) => `${c.kind} job ${100 * c.jobShare} %: ${f((100 * c.pow.powerBy[reg]![m]!) / c.pow.trials, 0)} %, ceiling ${f((100 * c.pow.ceiling[reg]![m]!) / c.pow.trials, 0)} %`).join("; ")})` : ""}`,
    );
  }
  const p95 = KINDS.filter((k) => k !== "one" && !k.startsWith("repeats")).filter((k) =>
    cells
      .filter((c) => c.kind === k && c.noisePct === 3)
      .every((c) => c.pow.powerBy["TTFT +10 %"]!.ttft_p95_ms! / c.pow.trials >= 0.8),
  );
  console.log(
    `evidence reaching ≥ 80 % for TTFT p95 +10 % at 3 % noise, every job share: ${p95.join(", ") || "none"}`,
  );
}

// Part 2: real documents. 16 sweeps of one unchanged mock, two busy loops beside them.
if (!a["skip-real"]) {
  const dir = mkdtempSync(join(tmpdir(), "tb-bench-verdict-"));
  const busy = [0, 1].map(() => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
  const docs: { id: string; doc: ResultDocument }[] = [];
  try {
    const mock = await spawnMock([
      "--ttft-ms",
      "30",
      "--ttft-jitter-ms",
      "5",
      "--itl-ms",
      "8",
      "--capacity",
      "8",
    ]);
    try {
      for (let i = 0; i < (quick ? 8 : 16); i++) {
        const out = join(dir, `run-${i}.json`);
        const r = spawnSync(
          process.execPath,
          [
            resolve(ROOT, "bin/tokenbench.js"),
            "sweep",
            ...["--base-url", mock.url, "--levels", "1,4,8", "--requests", "96", "--max-tokens", "16"],
            ...["--quiet", "--out", out, "--seed", "7"],
          ],
          { encoding: "utf8" },
        );
        if (r.status !== 0) throw new Error(`sweep failed: ${r.stderr}`);
        const doc = JSON.parse(readFileSync(out, "utf8")) as ResultDocument;
        docs.push({
          id: `run-${i}`,
          doc: { ...doc, created_at: new Date(Date.UTC(2026, 10, 1, i)).toISOString() },
        });
      }
    } finally {
      await mock.stop();
    }
  } finally {
    for (const b of busy) b.kill();
  }
  let pairs = 0;
  let failed = 0;
  let flagged = 0;
  let notGated = 0;
  let invalid = 0;
  for (const b of docs)
    for (const h of docs) {
      if (b === h) continue;
      const s = compareDocuments([b], h);
      pairs++;
      if (s.gate.status === "failed") failed++;
      if (s.gate.status === "not_gated") notGated++;
      if (s.rows.some((r) => r.verdict === "regressed" || r.verdict === "improved")) flagged++;
      if (s.rows.some((r) => r.verdict === "not_judged")) invalid++;
    }
  // As a history: each run the head of the ten before it (16 runs: 6 PRs).
  let hist = 0;
  let histFailed = 0;
  for (let i = 10; i < docs.length; i++) {
    const s = compareDocuments(docs.slice(i - 10, i), docs[i]!);
    hist++;
    if (s.gate.status === "failed") histFailed++;
  }
  console.log(
    `\nPart 2: ${docs.length} sweeps of an unchanged mock under two busy loops, ${pairs} ordered pairs one run against one run: gate failed ${failed} (${notGated} not gated), any row flagged in ${pct(flagged, pairs)}, rows not judged (validity) in ${pct(invalid, pairs)}; as a history of 10: gate failed ${histFailed} of ${hist}`,
  );
}
console.log(
  JSON.stringify({
    bench: "verdict",
    trials: TRIALS,
    power_trials: POWER_TRIALS,
    cells: cells.map((c) => ({
      noise_pct: c.noisePct,
      job_share: c.jobShare,
      evidence: c.kind,
      false_fail: c.nul.falseFail / c.nul.trials,
      any_flagged: c.nul.anyFlagged / c.nul.trials,
      power: Object.fromEntries(REGRESSIONS.map((g) => [g.name, c.pow.power[g.name]! / c.pow.trials])),
      power_by_measure: Object.fromEntries(
        REGRESSIONS.map((g) => [
          g.name,
          Object.fromEntries(Object.entries(c.pow.powerBy[g.name]!).map(([m, x]) => [m, x / c.pow.trials])),
        ]),
      ),
      ceiling: Object.fromEntries(
        REGRESSIONS.map((g) => [
          g.name,
          Object.fromEntries(Object.entries(c.pow.ceiling[g.name]!).map(([m, x]) => [m, x / c.pow.trials])),
        ]),
      ),
    })),
  }),
);
