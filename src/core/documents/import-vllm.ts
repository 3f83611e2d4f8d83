/**
 * Import: vLLM `bench serve --save-result` JSON (optionally `--save-detailed`) into a schema-v1
 * document, so users bring their history. (Export to other tools: export.ts.)
 */
import { TokenbenchError } from "../../schema/errors.ts";
import { impossibleFigures } from "../../schema/upload.ts";
import type { LevelResult, ResultDocument, Stats } from "../../schema/v1.ts";
import { SCHEMA_VERSION } from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import { summarize } from "../results/stats.ts";
import { TOOL_VERSION } from "../results/version.ts";

export class ImportError extends TokenbenchError {
  constructor(message: string) {
    super("import_invalid", message);
  }
}

type V = Record<string, unknown>;

/** A found value as an error shows it: strings quoted and named, long values cut. */
function shown(x: unknown): string {
  if (x === undefined) return "nothing";
  const s = JSON.stringify(x) ?? String(x);
  const cut = s.length > 40 ? `${s.slice(0, 40)}…` : s;
  return typeof x === "string" ? `${cut} (a string)` : cut;
}

const nonNegative = (x: number) => x >= 0;
const count = (x: number) => Number.isInteger(x) && x >= 0;

/**
 * The fields of one vLLM result, each checked where it is read: a value that would become NaN or
 * Infinity downstream (a zero duration, a string among the latencies) is refused, naming the file,
 * the field (with its index in an array) and what was found.
 */
function fieldsOf(v: V, source: string) {
  const fail = (field: string, want: string, got: unknown): never => {
    throw new ImportError(`${source}: ${field} must be ${want}, found ${shown(got)}`);
  };
  const value = (field: string, want: string, ok: (x: number) => boolean): number | null => {
    const x = v[field];
    if (x === undefined || x === null) return null;
    return typeof x === "number" && Number.isFinite(x) && ok(x) ? x : fail(field, want, x);
  };
  const required = (field: string, want: string, ok: (x: number) => boolean): number =>
    value(field, want, ok) ?? fail(field, want, v[field]);
  const series = (
    field: string,
    want: string,
    ok: (x: number) => boolean,
    at = v[field],
  ): number[] | null => {
    if (at === undefined || at === null) return null;
    if (!Array.isArray(at)) return fail(field, `an array of ${want}`, at);
    at.forEach((x, i) => {
      if (typeof x !== "number" || !Number.isFinite(x) || !ok(x)) fail(`${field}[${i}]`, want, x);
    });
    return at as number[];
  };
  const nested = (field: string, want: string): number[][] | null => {
    const at = v[field];
    if (at === undefined || at === null) return null;
    if (!Array.isArray(at)) return fail(field, `an array of arrays of ${want}`, at);
    return at.map((row, i) => series(`${field}[${i}]`, want, nonNegative, row) ?? []);
  };
  return { fail, value, required, series, nested };
}

function fromSummary(f: ReturnType<typeof fieldsOf>, key: string, n: number): Stats {
  const ms = (name: string) => f.value(name, "a number of milliseconds ≥ 0", nonNegative);
  const mean = ms(`mean_${key}_ms`);
  return {
    n: mean === null ? 0 : n,
    mean,
    min: null,
    max: null,
    p50: ms(`median_${key}_ms`) ?? ms(`p50_${key}_ms`),
    p90: ms(`p90_${key}_ms`),
    p95: ms(`p95_${key}_ms`),
    p99: ms(`p99_${key}_ms`),
  };
}

export function importVllm(raw: unknown, source = "vllm bench serve"): ResultDocument {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new ImportError("not a JSON object");
  const v = raw as V;
  if (v.completed === undefined && v.duration === undefined && v.output_throughput === undefined)
    throw new ImportError(
      `${source}: not a vLLM bench serve result: completed, duration and output_throughput are required`,
    );
  const f = fieldsOf(v, source);
  const completed = f.required("completed", "a count of requests (an integer ≥ 0)", count);
  // every rate below divides by it: a zero duration would make them Infinity
  const duration = f.required("duration", "a number of seconds above 0", (x) => x > 0);
  const outputThroughput = f.required("output_throughput", "a number of tok/s ≥ 0", nonNegative);
  const numPrompts = f.value("num_prompts", "a count of requests (an integer ≥ 0)", count) ?? completed;
  if (numPrompts < completed) f.fail("num_prompts", `at least completed (${completed})`, numPrompts);
  const maxConc = f.value("max_concurrency", "an integer ≥ 1", (x) => Number.isInteger(x) && x >= 1);
  // vLLM writes "inf" for --request-rate inf (all requests at once)
  const rate =
    v.request_rate === "inf"
      ? null
      : f.value("request_rate", 'a number of req/s above 0 or "inf"', (x) => x > 0);
  const mode: "closed" | "open" = maxConc !== null || rate === null ? "closed" : "open";
  const level = mode === "closed" ? (maxConc ?? numPrompts) : rate!;
  const ttfts = f.series("ttfts", "a number of seconds ≥ 0", nonNegative);
  const itls = f.nested("itls", "numbers of seconds ≥ 0");
  const outLens = f.series("output_lens", "a count of tokens (an integer ≥ 0)", count);
  const inLens = f.series("input_lens", "a count of tokens (an integer ≥ 0)", count);
  const given = { ttfts, itls, output_lens: outLens };
  const present = Object.entries(given).filter(([, a]) => a !== null);
  if (present.length > 0 && present.length < 3)
    throw new ImportError(
      `${source}: the per-request arrays of --save-detailed come together: ${present.map(([k]) => k).join(", ")} given without ${Object.keys(
        given,
      )
        .filter((k) => !present.some(([p]) => p === k))
        .join(", ")}`,
    );
  for (const [k, a] of [...present, ["input_lens", inLens] as const])
    if (a !== null && ttfts !== null && a.length !== ttfts.length)
      throw new ImportError(
        `${source}: ${k} has ${a.length} entries, ttfts ${ttfts.length}: one per request each`,
      );
  const detailed = ttfts !== null && itls !== null && outLens !== null;
  let ttft: Stats;
  let itl: Stats;
  let tpot: Stats;
  let e2e: Stats;
  let decode: Stats;
  const notes = [
    `imported from ${source}${typeof v.backend === "string" ? ` (backend ${v.backend})` : ""}${typeof v.date === "string" ? `, ${v.date}` : ""}`,
  ];
  if (detailed) {
    // vLLM stores seconds; failed requests have ttft 0 and no itls
    const ok = ttfts!
      .map((t, i) => ({ t, itl: itls![i]!, out: outLens![i] ?? 0 }))
      .filter((r) => r.t > 0 && r.out > 0);
    ttft = summarize(ok.map((r) => r.t * 1000));
    itl = summarize(ok.flatMap((r) => r.itl.map((x) => x * 1000)));
    tpot = summarize(
      ok.filter((r) => r.out > 1).map((r) => (1000 * r.itl.reduce((a, b) => a + b, 0)) / (r.out - 1)),
    );
    e2e = summarize(ok.map((r) => 1000 * (r.t + r.itl.reduce((a, b) => a + b, 0))));
    decode = summarize(
      ok
        .filter((r) => r.out > 1 && r.itl.reduce((a, b) => a + b, 0) > 0)
        .map((r) => (r.out - 1) / r.itl.reduce((a, b) => a + b, 0)),
    );
    notes.push("latency statistics recomputed by tokenbench from the per-request arrays (--save-detailed)");
  } else {
    ttft = fromSummary(f, "ttft", completed);
    itl = fromSummary(f, "itl", completed);
    tpot = fromSummary(f, "tpot", completed);
    e2e = fromSummary(f, "e2el", completed);
    decode = summarize([]);
    notes.push(
      "latency statistics as vLLM summarized them (median -> p50; percentiles vLLM did not save are null)",
    );
  }
  const tokens = (field: string) => f.value(field, "a count of tokens (an integer ≥ 0)", count) ?? 0;
  const rateOf = (field: string) => f.value(field, "a rate ≥ 0", nonNegative);
  const totalIn = tokens("total_input_tokens");
  const totalOut = tokens("total_output_tokens");
  const errors = Math.max(0, numPrompts - completed);
  const none = { p50: null, p99: null, max: null };
  const lvl: LevelResult = {
    level,
    mode,
    concurrency: mode === "closed" ? level : null,
    started_at_ms: 0,
    wall_time_s: duration,
    requests: numPrompts,
    ok: completed,
    errors,
    errors_by_code: errors > 0 ? { vllm_failed: errors } : {},
    warmup_requests: 0,
    prompt_tokens_total: totalIn,
    completion_tokens_total: totalOut,
    ttft_ms: ttft,
    itl_ms: itl,
    tpot_ms: tpot,
    e2e_ms: e2e,
    e2e_stream_ms: summarize([]),
    decode_tok_s: decode,
    tokens_per_chunk: summarize([]),
    usage_chunk_mismatches: 0,
    output_tok_s: outputThroughput,
    total_tok_s: rateOf("total_token_throughput") ?? (totalIn + totalOut) / duration,
    req_s: rateOf("request_throughput") ?? completed / duration,
    goodput_req_s: rateOf("request_goodput") ?? rateOf("request_throughput") ?? completed / duration,
    slo_pass_pct: null,
    peak_in_flight: f.value("max_concurrent_requests", "a count (an integer ≥ 0)", count) ?? 0,
    open_loop: null,
    client: {
      event_loop_delay_ms: none,
      cpu_user_s: 0,
      cpu_system_s: 0,
      cpu_pct_of_one_core: 0,
      bottleneck_warning: null,
    },
    notices: notes,
  };
  const impossible = impossibleFigures([lvl]);
  if (impossible.length > 0)
    throw new ImportError(
      `${source}: figures that cannot be true: ${impossible.map((i) => i.message).join("; ")}`,
    );
  const meanIn = inLens?.length
    ? Math.round(inLens.reduce((a, b) => a + b, 0) / inLens.length)
    : Math.max(1, Math.round(totalIn / Math.max(1, completed)));
  const maxOut = outLens?.length
    ? maxOf(outLens)
    : Math.max(1, Math.round(totalOut / Math.max(1, completed)));
  const burstiness = f.value("burstiness", "a number above 0", (x) => x > 0) ?? 1;
  const created =
    typeof v.date === "string" && /^\d{8}-\d{6}$/.test(v.date)
      ? `${v.date.slice(0, 4)}-${v.date.slice(4, 6)}-${v.date.slice(6, 8)}T${v.date.slice(9, 11)}:${v.date.slice(11, 13)}:${v.date.slice(13, 15)}Z`
      : new Date().toISOString();
  return {
    schema_version: SCHEMA_VERSION,
    kind: "sweep",
    tool: { name: "tokenbench", version: TOOL_VERSION },
    created_at: created,
    target: {
      base_url: "imported:vllm-bench-serve",
      api: "completions",
      model: typeof v.model_id === "string" ? v.model_id : "unknown",
    },
    environment: {
      os: "unknown",
      arch: "unknown",
      cpu_model: null,
      cpu_count: 0,
      node_version: "n/a",
      hostname: null,
      gpu: null,
    },
    clock: { source: "imported: vLLM bench serve (time.perf_counter)", origin_wall_time: created },
    formulas: {
      source:
        "figures as vLLM bench serve computed them, or recomputed from its per-request arrays with tokenbench's formulas",
      tpot_ms: "sum of the request's ITLs / (output_len - 1)",
      e2e_ms: "ttft + sum of the request's ITLs",
      percentile: "linear interpolation between closest ranks (Hyndman-Fan type 7) on raw samples",
    },
    config: {
      mode,
      levels: [level],
      requests_per_level: numPrompts,
      duration_s: null,
      warmup_requests: 0,
      prompt_tokens: Math.max(1, meanIn),
      max_tokens: Math.max(1, maxOut),
      prompts: "sample",
      ignore_eos: false,
      seed: 0,
      arrival: burstiness !== 1 ? "gamma" : "poisson",
      burstiness,
      max_in_flight: maxConc,
      timeout_s: 300,
      slo: { ttft_ms: null, tpot_ms: null, e2e_ms: null },
      extra_body: {},
      metrics_interval_ms: null,
      header_names: [],
    },
    levels: [lvl],
    requests: null,
    complete: true,
  };
}

/**
 * Several vLLM results (files, and `--append-result` files of one JSON object per line) as one
 * document: one level each, sorted; refused when they mix closed and open loop or give a level
 * twice, naming the sources.
 */
export function importVllmMany(results: { raw: unknown; source: string }[]): ResultDocument {
  if (results.length === 0) throw new ImportError("no vLLM result given");
  const docs = results.map((r) => ({ doc: importVllm(r.raw, r.source), source: r.source }));
  const first = docs[0]!.doc;
  const seen = new Map<number, string>();
  for (const { doc, source } of docs) {
    if (doc.config!.mode !== first.config!.mode)
      throw new ImportError(
        `${source} is ${doc.config!.mode} loop, ${docs[0]!.source} is ${first.config!.mode} loop`,
      );
    for (const l of doc.levels) {
      const other = seen.get(l.level);
      if (other !== undefined) throw new ImportError(`level ${l.level} appears in ${other} and in ${source}`);
      seen.set(l.level, source);
    }
  }
  const levels = docs.flatMap((d) => d.doc.levels).sort((a, b) => a.level - b.level);
  return { ...first, config: { ...first.config!, levels: levels.map((l) => l.level) }, levels };
}

/**
 * Python's json writes NaN and Infinity bare (vLLM's means when nothing completed); JSON has no
 * such tokens. Outside strings they read as missing values, which the field checks then judge.
 */
function pythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const patched = text.replace(/("(?:[^"\\]|\\.)*")|-?\b(?:NaN|Infinity)\b/g, (_m, str) => str ?? "null");
    if (patched === text) throw err;
    return JSON.parse(patched);
  }
}

/** The results in one file: a JSON object, or JSON Lines (`vllm bench serve --append-result`). */
export function vllmResultsIn(text: string, name: string): { raw: unknown; source: string }[] {
  if (text.trim() === "")
    throw new ImportError(
      `${name}: the file is empty (expected the JSON that vllm bench serve --save-result writes)`,
    );
  try {
    return [{ raw: pythonJson(text), source: `vllm bench serve (${name})` }];
  } catch {
    return text
      .split("\n")
      .map((line, i) => ({ line, i }))
      .filter(({ line }) => line.trim() !== "")
      .map(({ line, i }) => {
        try {
          return { raw: pythonJson(line), source: `vllm bench serve (${name} line ${i + 1})` };
        } catch {
          throw new ImportError(`${name}: line ${i + 1} is not JSON (one result object per line expected)`);
        }
      });
  }
}
