/**
 * Interop. Import: vLLM `bench serve --save-result` JSON (optionally `--save-detailed`) into a
 * schema-v1 document, so users bring their history. Export: github-action-benchmark's
 * `customSmallerIsBetter` / `customBiggerIsBetter` JSON.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { LevelResult, ResultDocument, Stats } from "../../schema/v1.ts";
import { SCHEMA_VERSION } from "../../schema/v1.ts";
import { documentPoints, MEASURE_BY_NAME } from "../../shared/measures.ts";
import { summarize } from "../results/stats.ts";
import { TOOL_VERSION } from "../results/version.ts";

export class ImportError extends TokenbenchError {
  constructor(message: string) {
    super("import_invalid", message);
  }
}

type V = Record<string, unknown>;
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const arr = (v: unknown): number[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === "number") ? (v as number[]) : null;

function fromSummary(v: V, key: string, n: number): Stats {
  const mean = num(v[`mean_${key}_ms`]);
  return {
    n: mean === null ? 0 : n,
    mean,
    min: null,
    max: null,
    p50: num(v[`median_${key}_ms`]) ?? num(v[`p50_${key}_ms`]),
    p90: num(v[`p90_${key}_ms`]),
    p95: num(v[`p95_${key}_ms`]),
    p99: num(v[`p99_${key}_ms`]),
  };
}

export function importVllm(raw: unknown, source = "vllm bench serve"): ResultDocument {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new ImportError("not a JSON object");
  const v = raw as V;
  const completed = num(v.completed);
  const duration = num(v.duration);
  if (completed === null || duration === null || num(v.output_throughput) === null) {
    throw new ImportError(
      "not a vLLM bench serve result: completed, duration and output_throughput are required",
    );
  }
  const numPrompts = num(v.num_prompts) ?? completed;
  const maxConc = num(v.max_concurrency);
  const rateRaw = v.request_rate;
  const rate = typeof rateRaw === "number" && Number.isFinite(rateRaw) ? rateRaw : null; // "inf" / Infinity: all at once
  const mode: "closed" | "open" = maxConc !== null || rate === null ? "closed" : "open";
  const level = mode === "closed" ? (maxConc ?? numPrompts) : rate!;
  const ttfts = arr(v.ttfts);
  const itls = Array.isArray(v.itls) ? (v.itls as unknown[]).map((x) => arr(x) ?? []) : null;
  const outLens = arr(v.output_lens);
  const inLens = arr(v.input_lens);
  const detailed = ttfts !== null && itls !== null && outLens !== null && ttfts.length === itls.length;
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
    ttft = fromSummary(v, "ttft", completed);
    itl = fromSummary(v, "itl", completed);
    tpot = fromSummary(v, "tpot", completed);
    e2e = fromSummary(v, "e2el", completed);
    decode = summarize([]);
    notes.push(
      "latency statistics as vLLM summarized them (median -> p50; percentiles vLLM did not save are null)",
    );
  }
  const totalIn = num(v.total_input_tokens) ?? 0;
  const totalOut = num(v.total_output_tokens) ?? 0;
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
    output_tok_s: num(v.output_throughput)!,
    total_tok_s: num(v.total_token_throughput) ?? (totalIn + totalOut) / duration,
    req_s: num(v.request_throughput) ?? completed / duration,
    goodput_req_s: num(v.request_goodput) ?? num(v.request_throughput) ?? completed / duration,
    slo_pass_pct: null,
    peak_in_flight: num(v.max_concurrent_requests) ?? 0,
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
  const meanIn = inLens?.length
    ? Math.round(inLens.reduce((a, b) => a + b, 0) / inLens.length)
    : Math.max(1, Math.round(totalIn / Math.max(1, completed)));
  const maxOut = outLens?.length
    ? Math.max(...outLens)
    : Math.max(1, Math.round(totalOut / Math.max(1, completed)));
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
      arrival: num(v.burstiness) !== null && num(v.burstiness) !== 1 ? "gamma" : "poisson",
      burstiness: num(v.burstiness) ?? 1,
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

export interface GabEntry {
  name: string;
  unit: string;
  value: number;
  extra?: string;
}

/** github-action-benchmark custom tools: one list per direction. */
export function exportGab(doc: ResultDocument): { smaller: GabEntry[]; bigger: GabEntry[] } {
  const smaller: GabEntry[] = [];
  const bigger: GabEntry[] = [];
  for (const p of documentPoints(doc)) {
    const def = MEASURE_BY_NAME.get(p.measure);
    if (!def) continue;
    const e: GabEntry = {
      name: `${p.benchmark} ${p.measure}`,
      unit: def.unit,
      value: p.value,
      extra: `${doc.target.model} (${doc.tool.name} ${doc.tool.version})`,
    };
    (def.direction === "lower" ? smaller : bigger).push(e);
  }
  return { smaller, bigger };
}

/**
 * Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format/): one object,
 * benchmark name -> measure slug -> {value}. Benchmarks are tokenbench's ("closed c=8"), measures
 * the catalogue's names in kebab case with their unit ("ttft-p95-ms", "output-tok-s").
 */
export function exportBencher(doc: ResultDocument): Record<string, Record<string, { value: number }>> {
  const out: Record<string, Record<string, { value: number }>> = {};
  for (const p of documentPoints(doc)) {
    if (!MEASURE_BY_NAME.has(p.measure)) continue;
    const bench = out[p.benchmark] ?? {};
    bench[p.measure.replace(/_/g, "-")] = { value: p.value };
    out[p.benchmark] = bench;
  }
  return out;
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

/** The results in one file: a JSON object, or JSON Lines (`vllm bench serve --append-result`). */
export function vllmResultsIn(text: string, name: string): { raw: unknown; source: string }[] {
  try {
    return [{ raw: JSON.parse(text), source: `vllm bench serve (${name})` }];
  } catch {
    return text
      .split("\n")
      .map((line, i) => ({ line, i }))
      .filter(({ line }) => line.trim() !== "")
      .map(({ line, i }) => {
        try {
          return { raw: JSON.parse(line), source: `vllm bench serve (${name} line ${i + 1})` };
        } catch {
          throw new ImportError(`${name}: line ${i + 1} is not JSON (one result object per line expected)`);
        }
      });
  }
}
