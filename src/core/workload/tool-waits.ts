/**
 * `--tool-wait DIST`: how long an agent's tools run between its calls. `file` (the default) keeps
 * each call's wait as the session file gives it; otherwise every call but a context's first waits
 * a draw from the stated distribution, seeded by the run's seed, the job and the call, so a rerun
 * waits the same: `fixed:MS`, `exp:MEAN_MS` (exponential), `lognormal:MEDIAN_MS:SIGMA` (the
 * heavy right tail tool runs have: a test suite or a build among quick reads).
 */
import { UsageError } from "../../schema/errors.ts";
import { normal, rng } from "./arrivals.ts";

export type ToolWait =
  | { kind: "file" }
  | { kind: "fixed"; ms: number }
  | { kind: "exp"; meanMs: number }
  | { kind: "lognormal"; medianMs: number; sigma: number };

/** One tool run at most this long: a draw past it is cut to it (an hour, the file's own bound). */
export const MAX_TOOL_WAIT_MS = 3_600_000;

export function parseToolWait(s: string): ToolWait {
  const t = s.trim();
  if (t === "file") return { kind: "file" };
  const [kind, a, b] = t.split(":");
  const x = Number(a);
  const y = Number(b);
  const ok = (v: number) => Number.isFinite(v) && v >= 0 && v <= MAX_TOOL_WAIT_MS;
  if (kind === "fixed" && b === undefined && ok(x)) return { kind, ms: x };
  if (kind === "exp" && b === undefined && ok(x) && x > 0) return { kind, meanMs: x };
  if (kind === "lognormal" && ok(x) && x > 0 && Number.isFinite(y) && y > 0 && y <= 4)
    return { kind, medianMs: x, sigma: y };
  throw new UsageError(
    `--tool-wait must be file, fixed:MS, exp:MEAN_MS or lognormal:MEDIAN_MS:SIGMA (SIGMA up to 4; e.g. lognormal:1000:1 for a median of 1 s), got "${s}"`,
    "--tool-wait",
  );
}

/** The wait before call `turn` of job `job`: the file's, or a seeded draw. */
export function toolWaitMs(w: ToolWait, fileMs: number, seed: number, job: number, turn: number): number {
  if (w.kind === "file") return fileMs;
  if (w.kind === "fixed") return w.ms;
  const r = rng(
    (Math.imul(seed ^ 0x7001, 0x9e3779b1) ^ Math.imul(job + 1, 0x85ebca6b) ^ (turn * 0xc2b2ae35)) >>> 0,
  );
  const draw = w.kind === "exp" ? -w.meanMs * Math.log(1 - r()) : w.medianMs * Math.exp(w.sigma * normal(r));
  return Math.min(MAX_TOOL_WAIT_MS, draw);
}
