/**
 * The query parameters of every GET route, declared once: the routes read them through
 * `readQuery` and the OpenAPI document lists them from the same table. A parameter the route does
 * not take, one given twice, or one in a form it cannot use is a 400 naming it, so a typo or a
 * bad date never answers 200 with no data.
 */
import { CHANGE_POINT_DEFAULTS } from "../shared/change-points.ts";
import { MEASURE_BY_NAME, type MeasureDef } from "../shared/measures.ts";
import { DEFAULT_FAIL_ON, DEFAULT_GATE_TEXT } from "../shared/rules.ts";
import { VERDICT_DEFAULTS } from "../shared/verdict.ts";
import type { Ctx } from "./context.ts";
import { ApiError } from "./errors.ts";
import { BASE_RUNS } from "./judge.ts";

export interface Param<T> {
  /** what OpenAPI says the parameter is */
  schema: { type: "string" | "integer" | "number"; format?: string; minimum?: number; maximum?: number };
  description: string;
  required: boolean;
  /** the value when the parameter is absent or empty */
  absent: T;
  /** the value of a present, non-empty parameter; throws the 400 naming it */
  read(raw: string, name: string): T;
}

const shown = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);
const invalid = (name: string, want: string, raw: string) =>
  new ApiError(400, "invalid_query", `query parameter ${name} must be ${want}, got ${shown(raw)}`, {
    parameter: name,
  });

// C0 and C1 controls: no branch, testbed or benchmark name holds one
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A name (branch, testbed, benchmark): 1 to 255 characters, no control characters. */
export const name = (description: string, required = false): Param<string | null> => ({
  schema: { type: "string" },
  description,
  required,
  absent: null,
  read(raw, n) {
    if (raw.length > 255 || CONTROL.test(raw))
      throw invalid(n, "a name of at most 255 characters without control characters", raw);
    return raw;
  },
});

/** A number within [min, max], or its default when absent; `integer`: digits only. */
function numeric(integer: boolean) {
  const what = integer ? "an integer" : "a number";
  return (absent: number, min: number, max: number, description: string): Param<number> => ({
    schema: { type: integer ? "integer" : "number", minimum: min, maximum: max },
    description,
    required: false,
    absent,
    read(raw, n) {
      const v = Number(raw);
      const ok = integer ? /^-?\d+$/.test(raw.trim()) : raw.trim() !== "" && Number.isFinite(v);
      if (!ok || v < min || v > max) throw invalid(n, `${what} in [${min}, ${max}]`, raw);
      return v;
    },
  });
}
export const int = numeric(true);
export const num = numeric(false);

/** An ISO 8601 date or date-time, answered as the stored form (UTC, milliseconds). */
export const date = (description: string): Param<string | null> => ({
  schema: { type: "string", format: "date-time" },
  description,
  required: false,
  absent: null,
  read(raw, n) {
    const ok = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw);
    const t = ok ? Date.parse(raw) : Number.NaN;
    if (!Number.isFinite(t))
      throw invalid(n, "an ISO 8601 date or date-time, e.g. 2026-11-01 or 2026-11-01T12:00:00Z", raw);
    return new Date(t).toISOString();
  },
});

/** A commit sha or a prefix of one (4 to 40 hex digits). */
export const sha = (description: string): Param<string | null> => ({
  schema: { type: "string" },
  description,
  required: false,
  absent: null,
  read(raw, n) {
    if (!/^[0-9a-f]{4,40}$/i.test(raw))
      throw invalid(n, "a commit sha or a prefix of it (4 to 40 hex digits)", raw);
    return raw.toLowerCase();
  },
});

/** A run's public id (16 hex digits, as run URLs end). */
export const runId = (description: string): Param<string | null> => ({
  schema: { type: "string" },
  description,
  required: false,
  absent: null,
  read(raw, n) {
    if (!/^[0-9a-f]{16}$/.test(raw)) throw invalid(n, "a run id (16 hex digits, as a run URL ends)", raw);
    return raw;
  },
});

/** A measure of the catalogue (unknown ones keep their own code, as the dashboard and badges show it). */
export const measure = (description: string, required = false): Param<MeasureDef | null> => ({
  schema: { type: "string" },
  description,
  required,
  absent: null,
  read(raw, n) {
    const def = MEASURE_BY_NAME.get(raw);
    if (!def)
      throw new ApiError(400, "unknown_measure", `query parameter ${n}: unknown measure ${shown(raw)}`, {
        parameter: n,
      });
    return def;
  },
});

/** Free text a route parses itself (rules, cursors), bounded in length. */
export const text = (description: string, maxLength = 2000): Param<string | null> => ({
  schema: { type: "string" },
  description,
  required: false,
  absent: null,
  read(raw, n) {
    if (raw.length > maxLength) throw invalid(n, `at most ${maxLength} characters`, raw);
    return raw;
  },
});

export type Spec = Record<string, Param<unknown>>;
export type Values<S extends Spec> = { [K in keyof S]: S[K] extends Param<infer T> ? T : never };

/**
 * The route's parameters, read once. `unknown: "ignore"` is for image routes, where a README's
 * cache-busting `?v=2` must still get its badge.
 */
export function readQuery<S extends Spec>(
  c: Ctx,
  spec: S,
  opts: { unknown?: "refuse" | "ignore" } = {},
): Values<S> {
  const params = new URL(c.req.url).searchParams;
  const known = Object.keys(spec);
  for (const key of new Set(params.keys())) {
    if (!(key in spec)) {
      if (opts.unknown === "ignore") continue;
      throw new ApiError(
        400,
        "unknown_parameter",
        `unknown query parameter ${shown(key)}: this route takes ${known.length > 0 ? known.join(", ") : "none"}`,
        { parameter: key },
      );
    }
    if (params.getAll(key).length > 1) throw invalid(key, "given once", params.getAll(key).join(", "));
  }
  const out: Record<string, unknown> = {};
  for (const [key, p] of Object.entries(spec)) {
    const raw = params.get(key);
    if (raw === null || raw === "") {
      if (p.required)
        throw new ApiError(400, "invalid_query", `query parameter ${key} is required (${p.description})`, {
          parameter: key,
        });
      out[key] = p.absent;
    } else out[key] = p.read(raw, key);
  }
  return out as Values<S>;
}

const testbed = name("testbed name or fingerprint (default: the newest run's testbed)");

/** Every GET route's query, by route. */
export const QUERIES = {
  runs: {
    branch: name("branch name"),
    testbed: name("testbed name or fingerprint"),
    sha: sha("commit sha prefix"),
    pr: int(0, 0, 2_147_483_647, "only the runs of this pull request (0: any, the default)"),
    limit: int(20, 1, 100, "runs per page, default 20"),
    cursor: text("next_cursor of the previous page", 200),
  },
  series: {
    benchmark: name("e.g. closed c=8", true),
    measure: measure("e.g. ttft_p95_ms", true),
    testbed,
    branch: name("default main"),
    limit: int(100, 1, 1000, "points, newest first, default 100"),
    since: date("only points from this time on (ISO 8601)"),
  },
  changePoints: {
    benchmark: name("e.g. closed c=8", true),
    measure: measure("e.g. output_tok_s", true),
    testbed,
    branch: name("default main"),
    limit: int(100, 8, 200, "runs searched, default 100"),
    min_segment: int(
      CHANGE_POINT_DEFAULTS.minSegment,
      2,
      50,
      `runs on each side of a change, default ${CHANGE_POINT_DEFAULTS.minSegment}`,
    ),
    p_value: num(
      CHANGE_POINT_DEFAULTS.pValue,
      1e-9,
      0.2,
      `significance after the Bonferroni correction, default ${CHANGE_POINT_DEFAULTS.pValue}`,
    ),
  },
  compare: {
    head: runId("run id (default: the newest run)"),
    base_branch: name("default: the document's base branch, else its own branch"),
    n: int(BASE_RUNS, 1, 100, `baseline runs, default ${BASE_RUNS}`),
    threshold_pct: num(
      VERDICT_DEFAULTS.fallbackPct,
      0,
      1000,
      `the percent method's threshold where nothing measures noise, default ${VERDICT_DEFAULTS.fallbackPct}`,
    ),
    confidence: num(VERDICT_DEFAULTS.confidence, 0.5, 0.9999, `default ${VERDICT_DEFAULTS.confidence}`),
    min_points: int(
      VERDICT_DEFAULTS.minHistory,
      2,
      100,
      `base runs for history-t, default ${VERDICT_DEFAULTS.minHistory}`,
    ),
    thresholds: text(
      'rules, e.g. "ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test" (default: the run\'s own, else *=t-test)',
    ),
    gate: text(`the gated rows, e.g. "${DEFAULT_GATE_TEXT}" or off (default: the run's own, else that)`),
    fwer: num(
      VERDICT_DEFAULTS.fwerPct,
      0.01,
      49,
      `the gate's false-fail rate per pull request, %, default ${VERDICT_DEFAULTS.fwerPct}`,
    ),
    fail_on: text(
      `regression | unjudged | warning | never: what sets \`failed\` (default ${DEFAULT_FAIL_ON})`,
      20,
    ),
  },
  badge: {
    benchmark: name("default: the headline of the newest run"),
    measure: measure("default: the headline of the newest run"),
    testbed,
    branch: name("default: any branch"),
    label: text("the badge's left-hand text (default: the measure and where)", 100),
  },
  none: {},
  tokens: { repository: name("only this repository's tokens") },
} as const satisfies Record<string, Spec>;

/** OpenAPI parameter objects of a route's query. */
export function queryParameters(spec: Spec) {
  return Object.entries(spec).map(([n, p]) => ({
    name: n,
    in: "query",
    required: p.required,
    schema: p.schema,
    description: p.description,
  }));
}
