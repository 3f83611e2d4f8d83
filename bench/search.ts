// The saturation search against a server whose capacity is known: the mock with 16 slots, 60 ms
// TTFT, 12 ms ITL and 32 output tokens sustains 16 / (0.060 + 32 x 0.012) s = 36.0 req/s (its
// --help). Five seeds of each arrival kind through the CLI, as users run it, with the search's own
// defaults (a start of 1 req/s, 8 probes); the target: every answer within -10 % / +3 % of the
// capacity, never above what its passing probe delivered, and a bracket of at most 3 %.
// Usage: npm run build && npx tsx bench/search.ts [--quick]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ResultDocument } from "../src/schema/v1.ts";
import { f, ROOT, spawnMock } from "./lib.ts";

const quick = process.argv.includes("--quick");
const SEEDS = quick ? [1] : [1, 2, 3, 4, 5];
const CAPACITY = 16 / (0.06 + 32 * 0.012);
const dir = mkdtempSync(join(tmpdir(), "tb-bench-search-"));
const results: Record<string, unknown>[] = [];
let allPass = true;
for (const arrival of ["poisson", "constant"]) {
  for (const seed of SEEDS) {
    const mock = await spawnMock([
      "--ttft-ms",
      "60",
      "--itl-ms",
      "12",
      "--capacity",
      "16",
      "--prefix-cache-tokens",
      "0",
    ]);
    const out = join(dir, `${arrival}-${seed}.json`);
    const r = spawnSync(
      process.execPath,
      [
        resolve(ROOT, "bin/tokenbench.js"),
        "sweep",
        "--base-url",
        mock.url,
        "--mode",
        "search",
        "--max-tokens",
        "32",
        "--slo-ttft-ms",
        "500",
        "--arrival",
        arrival,
        "--seed",
        String(seed),
        "--warmup",
        "0",
        "--calibrate-prompts",
        "false",
        "--metrics-interval-ms",
        "0",
        "--quiet",
        "--out",
        out,
      ],
      { encoding: "utf8" },
    );
    await mock.stop();
    if (r.status !== 0) {
      console.log(`${arrival} seed ${seed}: exit ${r.status}: ${r.stderr.slice(-300)}`);
      allPass = false;
      continue;
    }
    const doc = JSON.parse(readFileSync(out, "utf8")) as ResultDocument;
    const s = doc.saturation!;
    const answer = s.max_rate_rps!;
    const [lo, hi] = s.bracket_rps;
    const width = hi !== null && lo !== null ? (hi - lo) / hi : Number.NaN;
    const passing = doc.levels.filter(
      (l) => l.steady_state?.steady && (l.slo_pass_pct ?? 0) >= s.target_pass_pct,
    );
    const delivered = Math.max(...passing.map((l) => l.steady_state!.completed_rps ?? 0));
    const off = answer / CAPACITY - 1;
    const pass = off >= -0.1 && off <= 0.03 && answer <= delivered + 1e-9 && width <= 0.03;
    allPass &&= pass;
    console.log(
      `${arrival.padEnd(8)} seed ${seed}: ${f(answer, 2)} req/s (${off >= 0 ? "+" : ""}${f(100 * off, 1)} % of ${f(CAPACITY, 2)}), bracket ${f(lo ?? Number.NaN, 2)}-${f(hi ?? Number.NaN, 2)} (${f(100 * width, 1)} %), highest delivered by a passing probe ${f(delivered, 2)}, ${s.probes} probes [${pass ? "PASS" : "MISS"}]`,
    );
    // a miss names its probes in order: the rate, the pass share, steady or not, what finished per second
    if (!pass)
      for (const l of doc.levels)
        console.log(
          `    probe ${f(l.level, 2)} req/s: ${f(l.slo_pass_pct ?? 0, 1)} % passed, ${l.steady_state?.steady ? "steady" : "not steady"}${l.steady_state?.fell_behind ? ", fell behind" : ""}, finished ${f(l.steady_state?.completed_rps ?? Number.NaN, 2)} req/s`,
        );
    results.push({
      arrival,
      seed,
      answer_rps: answer,
      off_pct: 100 * off,
      bracket_pct: 100 * width,
      probes: s.probes,
      pass,
    });
  }
}
console.log(JSON.stringify({ bench: "search", capacity_rps: CAPACITY, all_pass: allPass, runs: results }));
