/**
 * Pull requests through the one engine on the CI-noise model (ci-noise.ts): for one kind of
 * evidence, how often an unchanged PR fails the gate (its false-fail rate), how often it carries
 * any flagged row, and how often a PR with a given regression fails it (power). Each trial draws
 * its own base (a history, a base job, or an A/B job) and judges one unchanged head and one head
 * per regression against it. Seeded. Used by bench/verdict.ts and the gate's unit test.
 */
import type { ResultDocument } from "../../src/schema/v1.ts";
import { compareDocuments, type Side } from "../../src/shared/comparison.ts";
import {
  abDocument,
  type Change,
  historyDocuments,
  jobEffect,
  NO_CHANGE,
  type NoiseModel,
  repeatsDocument,
  rng,
  runDocument,
} from "./ci-noise.ts";

/** "one" (one run each side), "history N", "repeats N" (each side a job of N repeats), "ab N" (pairs). */
export type EvidenceKind = "one" | `history ${number}` | `repeats ${number}` | `ab ${number}`;

export interface Regression {
  name: string;
  change: Change;
}

export const REGRESSIONS: readonly Regression[] = [5, 10, 20].flatMap((pct) => [
  { name: `output tok/s −${pct} %`, change: { ttft: 0, tput: pct / 100 } },
  { name: `TTFT +${pct} %`, change: { ttft: pct / 100, tput: 0 } },
]);

export interface CellRates {
  trials: number;
  /** Unchanged PRs whose gate failed. */
  falseFail: number;
  /** Unchanged PRs with any row flagged (regressed or improved), gated or not. */
  anyFlagged: number;
  /** Per regression: PRs whose gate failed. */
  power: Record<string, number>;
  /** Unchanged PRs by the gate's status. */
  status: Record<string, number>;
}

const n = (kind: string) => Number(kind.split(" ")[1]);

/** One trial's base and a head maker for this kind of evidence. */
function trialOf(
  r: () => number,
  m: NoiseModel,
  kind: EvidenceKind,
): (change: Change) => { bases: Side[]; head: Side } {
  if (kind === "one") {
    const base = runDocument(r, m, jobEffect(r, m), NO_CHANGE);
    return (change) => ({
      bases: [{ id: "base", doc: base }],
      head: { id: "head", doc: runDocument(r, m, jobEffect(r, m), change) },
    });
  }
  if (kind.startsWith("history")) {
    const hist = historyDocuments(r, m, n(kind));
    return (change) => ({
      bases: hist,
      head: { id: "head", doc: runDocument(r, m, jobEffect(r, m), change) },
    });
  }
  if (kind.startsWith("repeats")) {
    const base = repeatsDocument(r, m, n(kind), NO_CHANGE);
    return (change) => ({
      bases: [{ id: "base", doc: base }],
      head: { id: "head", doc: repeatsDocument(r, m, n(kind), change) },
    });
  }
  // A/B: each PR is its own job, base and head blocks together.
  return (change) => ({
    bases: [],
    head: { id: "head", doc: abDocument(r, m, n(kind), change) } as { id: string; doc: ResultDocument },
  });
}

export function cellRates(
  m: NoiseModel,
  kind: EvidenceKind,
  o: { trials: number; seed: number; regressions?: readonly Regression[]; iterations?: number },
): CellRates {
  const r = rng(o.seed);
  const regs = o.regressions ?? REGRESSIONS;
  const out: CellRates = { trials: o.trials, falseFail: 0, anyFlagged: 0, power: {}, status: {} };
  for (const g of regs) out.power[g.name] = 0;
  const opts = { iterations: o.iterations ?? 1000 };
  for (let t = 0; t < o.trials; t++) {
    const pr = trialOf(r, m, kind);
    const null0 = pr(NO_CHANGE);
    const s = compareDocuments(null0.bases, null0.head, opts);
    out.status[s.gate.status] = (out.status[s.gate.status] ?? 0) + 1;
    if (s.gate.status === "failed") out.falseFail++;
    if (s.rows.some((x) => x.verdict === "regressed" || x.verdict === "improved")) out.anyFlagged++;
    for (const g of regs) {
      const p = pr(g.change);
      if (compareDocuments(p.bases, p.head, opts).gate.status === "failed") out.power[g.name]!++;
    }
  }
  return out;
}
