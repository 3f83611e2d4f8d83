/**
 * Chart specifications (Vega-Lite), shared by the CLI (rendered in Node to SVG/PNG) and the
 * dashboard (rendered in the browser), so a chart looks the same everywhere. Pure: data in,
 * spec out.
 */
import type { LevelResult, ResultDocument } from "../schema/v1.ts";
import { BASE, type Spec } from "./chart-base.ts";
import { frontierSpec } from "./frontier-chart.ts";
import { sloGiven } from "./workload.ts";

export { BASE, type Spec };

export interface LevelRow {
  series: string; // "head", "base", or a run label
  level: number;
  output_tok_s: number;
  total_tok_s: number;
  goodput_req_s: number;
  slo_pass_pct: number | null;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  itl_p50_ms: number | null;
  itl_p95_ms: number | null;
  tpot_p50_ms: number | null;
  tpot_p95_ms: number | null;
  e2e_p50_ms: number | null;
  /** Reasoning models only: time to first answer token (absent elsewhere, where it is TTFT). */
  ttfat_p50_ms?: number | null;
  ttfat_p95_ms?: number | null;
}

export function levelRows(levels: readonly LevelResult[], series = "run"): LevelRow[] {
  return levels.map((l) => ({
    series,
    level: l.level,
    output_tok_s: l.output_tok_s,
    total_tok_s: l.total_tok_s,
    goodput_req_s: l.goodput_req_s,
    slo_pass_pct: l.slo_pass_pct,
    ttft_p50_ms: l.ttft_ms.p50,
    ttft_p95_ms: l.ttft_ms.p95,
    itl_p50_ms: l.itl_ms.p50,
    itl_p95_ms: l.itl_ms.p95,
    tpot_p50_ms: l.tpot_ms.p50,
    tpot_p95_ms: l.tpot_ms.p95,
    e2e_p50_ms: l.e2e_ms.p50,
    ...(l.ttfat_ms ? { ttfat_p50_ms: l.ttfat_ms.p50, ttfat_p95_ms: l.ttfat_ms.p95 } : {}),
  }));
}

function levelAxis(mode: "closed" | "open") {
  return {
    field: "level",
    type: "quantitative",
    title: mode === "closed" ? "concurrent users" : "request rate (req/s)",
    scale: { type: "log", base: 2 },
  };
}

/** Colour by run; no legend when there is one run (a legend of one entry says nothing). */
const colorOf = (rows: readonly { series: string }[]) => ({
  field: "series",
  type: "nominal",
  title: null,
  ...(new Set(rows.map((r) => r.series)).size < 2 ? { legend: null } : {}),
});

export function throughputSpec(rows: LevelRow[], mode: "closed" | "open"): Spec {
  const color = colorOf(rows);
  return {
    ...BASE,
    title: "Output throughput vs level",
    data: { values: rows },
    mark: { type: "line", point: true, tooltip: true },
    encoding: {
      x: levelAxis(mode),
      y: { field: "output_tok_s", type: "quantitative", title: "output tok/s" },
      color,
    },
  };
}

/**
 * p50 and p95 of each latency per level, faceted by measure: p50 a solid line with circles, p95
 * dashed with triangles (told apart without colour). The TTFT SLO is drawn on the knee chart.
 */
export function latencySpec(rows: LevelRow[], mode: "closed" | "open"): Spec {
  const long: { series: string; level: number; metric: string; stat: string; value: number }[] = [];
  for (const r of rows) {
    for (const [metric, p50, p95] of [
      ["TTFT", r.ttft_p50_ms, r.ttft_p95_ms],
      ["TTFAT", r.ttfat_p50_ms ?? null, r.ttfat_p95_ms ?? null],
      ["ITL", r.itl_p50_ms, r.itl_p95_ms],
      ["TPOT", r.tpot_p50_ms, r.tpot_p95_ms],
    ] as const) {
      if (p50 !== null) long.push({ series: r.series, level: r.level, metric, stat: "p50", value: p50 });
      if (p95 !== null) long.push({ series: r.series, level: r.level, metric, stat: "p95", value: p95 });
    }
  }
  const stat = { field: "stat", type: "nominal", title: null };
  return {
    ...BASE,
    width: 220,
    height: 200,
    title: "Latency (ms) vs level: p50 solid circles, p95 dashed triangles",
    data: { values: long },
    facet: {
      column: { field: "metric", type: "nominal", title: null, sort: ["TTFT", "TTFAT", "ITL", "TPOT"] },
    },
    resolve: { scale: { y: "independent" } },
    spec: {
      layer: [
        {
          mark: { type: "line", point: { filled: true, size: 45 }, tooltip: true },
          encoding: {
            x: levelAxis(mode),
            y: { field: "value", type: "quantitative", title: "ms" },
            color: colorOf(rows),
            strokeDash: { ...stat, legend: null }, // one legend for p50/p95: the shape's
            shape: { ...stat, scale: { domain: ["p50", "p95"], range: ["circle", "triangle-up"] } },
          },
        },
      ],
    },
  };
}

export function kneeSpec(rows: LevelRow[], sloTtftMs: number | null = null): Spec {
  const color = colorOf(rows);
  return {
    ...BASE,
    title: `Latency vs throughput (the knee)${sloTtftMs !== null ? `; TTFT SLO ${sloTtftMs} ms in red` : ""}`,
    data: { values: rows.filter((r) => r.ttft_p95_ms !== null) },
    layer: [
      ...(sloTtftMs !== null
        ? [
            {
              data: { values: [{ slo: sloTtftMs }] },
              mark: { type: "rule", color: "#d73a49", strokeWidth: 1.5 },
              encoding: { y: { field: "slo", type: "quantitative", scale: { type: "log" } } },
            },
          ]
        : []),
      {
        mark: { type: "line", point: true, tooltip: true },
        encoding: {
          x: { field: "output_tok_s", type: "quantitative", title: "output tok/s" },
          y: { field: "ttft_p95_ms", type: "quantitative", title: "TTFT p95 (ms)", scale: { type: "log" } },
          color,
          order: { field: "level" },
        },
      },
      {
        mark: { type: "text", dx: 8, dy: -8, fontSize: 10 },
        encoding: {
          x: { field: "output_tok_s", type: "quantitative" },
          y: { field: "ttft_p95_ms", type: "quantitative", scale: { type: "log" } },
          text: { field: "level" },
          color,
        },
      },
    ],
  };
}

export function goodputSpec(rows: LevelRow[], mode: "closed" | "open"): Spec {
  const color = colorOf(rows);
  return {
    ...BASE,
    title: "Goodput and SLO pass rate vs level",
    data: { values: rows },
    layer: [
      {
        mark: { type: "bar", opacity: 0.35, tooltip: true },
        encoding: {
          x: {
            field: "level",
            type: "ordinal",
            title: mode === "closed" ? "concurrent users" : "request rate (req/s)",
          },
          xOffset: { field: "series" },
          y: {
            field: "slo_pass_pct",
            type: "quantitative",
            title: "SLO pass %",
            scale: { domain: [0, 100] },
          },
          color,
        },
      },
      {
        mark: { type: "line", point: true, tooltip: true },
        encoding: {
          x: { field: "level", type: "ordinal" },
          y: { field: "goodput_req_s", type: "quantitative", title: "goodput req/s" },
          color,
        },
      },
    ],
    resolve: { scale: { y: "independent" } },
  };
}

export function metricsTimelineSpec(doc: ResultDocument): Spec | null {
  const values: { t_s: number; series: string; value: number; level: number }[] = [];
  for (const l of doc.levels) {
    for (const s of l.metrics_timeline ?? []) {
      const t = s.t_ms / 1000;
      if (s.running !== null) values.push({ t_s: t, series: "running", value: s.running, level: l.level });
      if (s.waiting !== null) values.push({ t_s: t, series: "waiting", value: s.waiting, level: l.level });
      if (s.kv_cache_usage_pct !== null)
        values.push({ t_s: t, series: "KV usage %", value: s.kv_cache_usage_pct, level: l.level });
    }
  }
  if (values.length === 0) return null;
  const bounds = doc.levels.map((l) => ({ t_s: l.started_at_ms / 1000, label: `${l.level}` }));
  return {
    ...BASE,
    width: 640,
    title: "Server /metrics across levels (running, waiting, KV usage)",
    layer: [
      {
        data: { values },
        mark: { type: "line", interpolate: "step-after", tooltip: true },
        encoding: {
          x: { field: "t_s", type: "quantitative", title: "seconds since the sweep started" },
          y: { field: "value", type: "quantitative", title: "requests / %" },
          color: { field: "series", type: "nominal", title: null },
        },
      },
      {
        data: { values: bounds },
        mark: { type: "rule", strokeDash: [2, 3], color: "#999" },
        encoding: { x: { field: "t_s", type: "quantitative" } },
      },
      {
        data: { values: bounds },
        mark: { type: "text", dy: -6, align: "left", dx: 3, color: "#666", fontSize: 10 },
        encoding: { x: { field: "t_s", type: "quantitative" }, y: { value: 0 }, text: { field: "label" } },
      },
    ],
  };
}

export function profileSpecs(doc: ResultDocument): Record<string, Spec> {
  const samples = (doc.profile?.samples ?? []).filter((s) => s.error === null);
  const prefill = samples
    .filter((s) => s.phase === "prefill")
    .map((s) => ({
      prompt_tokens: s.prompt_tokens,
      ttft_ms: s.client_wall_ttft_ms,
      prefill_tps: s.client_wall_effective_prefill_tps,
    }));
  const prefix = samples
    .filter((s) => s.phase.startsWith("prefix_"))
    .map((s) => ({
      case: s.phase.replace("prefix_", ""),
      ttft_ms: s.client_wall_ttft_ms,
      cached_tokens: s.cached_tokens,
    }));
  return {
    "profile-prefill": {
      ...BASE,
      title: "Fresh prefill: client-wall TTFT vs prompt tokens",
      data: { values: prefill },
      mark: { type: "point", filled: true, tooltip: true },
      encoding: {
        x: { field: "prompt_tokens", type: "quantitative", title: "prompt tokens" },
        y: { field: "ttft_ms", type: "quantitative", title: "client_wall_ttft_ms" },
      },
    },
    "profile-prefix-cache": {
      ...BASE,
      title: "Prefix cache: TTFT by case",
      data: { values: prefix },
      mark: { type: "point", filled: true, tooltip: true },
      encoding: {
        x: { field: "case", type: "nominal", sort: ["fresh", "identical", "small_suffix"], title: null },
        y: { field: "ttft_ms", type: "quantitative", title: "client_wall_ttft_ms" },
        color: { field: "case", type: "nominal", legend: null },
      },
    },
  };
}

/** Every chart for a document: name -> spec. Base rows (if any) are drawn as a second series. */
export function documentSpecs(doc: ResultDocument, baseline?: ResultDocument): Record<string, Spec> {
  if (doc.kind === "profile") return profileSpecs(doc);
  const mode = doc.config?.mode ?? "closed";
  const rows = [
    ...levelRows(doc.levels, baseline ? "head" : "run"),
    ...(baseline ? levelRows(baseline.levels, "base") : []),
  ];
  const slo = doc.config?.slo ?? null;
  const anySlo = sloGiven(doc.config);
  const out: Record<string, Spec> = {
    throughput: throughputSpec(rows, mode),
    latency: latencySpec(rows, mode),
    knee: kneeSpec(rows, slo?.ttft_ms ?? null),
    // Goodput and SLO pass say something only under an SLO: without one every request passes.
    ...(anySlo ? { goodput: goodputSpec(rows, mode) } : {}),
  };
  const frontier = frontierSpec(doc, baseline);
  if (frontier) out.frontier = frontier;
  const timeline = metricsTimelineSpec(doc);
  if (timeline) out["metrics-timeline"] = timeline;
  Object.assign(out, energySpecs(doc));
  return out;
}

/** GPU power over the sweep with the level boundaries, and tokens per joule by level (with telemetry). */
function energySpecs(doc: ResultDocument): Record<string, Spec> {
  const samples = doc.gpu_telemetry?.samples ?? [];
  if (samples.length === 0) return {};
  const power = samples
    .filter((x) => x.power_w !== null)
    .map((x) => ({ t_s: x.t_ms / 1000, gpu: `GPU ${x.index}`, power_w: x.power_w }));
  const bounds = doc.levels.map((l) => ({ t_s: l.started_at_ms / 1000, label: `${l.level}` }));
  const perJ = doc.levels
    .filter((l) => l.gpu?.output_tok_per_j != null)
    .map((l) => ({ level: l.level, tok_per_j: l.gpu!.output_tok_per_j }));
  const mode = doc.config?.mode ?? "closed";
  return {
    power: {
      ...BASE,
      width: 640,
      title: `GPU power over the sweep (${doc.gpu_telemetry!.source}); dotted: level starts`,
      layer: [
        {
          data: { values: power },
          mark: { type: "line", interpolate: "step-after", tooltip: true },
          encoding: {
            x: { field: "t_s", type: "quantitative", title: "seconds since the sweep started" },
            y: { field: "power_w", type: "quantitative", title: "power (W)" },
            color: { ...colorOf(power.map((p) => ({ series: p.gpu }))), field: "gpu" },
          },
        },
        {
          data: { values: bounds },
          mark: { type: "rule", strokeDash: [2, 3], color: "#999" },
          encoding: { x: { field: "t_s", type: "quantitative" } },
        },
      ],
    },
    ...(perJ.length > 0
      ? {
          "tokens-per-joule": {
            ...BASE,
            title: "Output tokens per joule of GPU energy vs level",
            data: { values: perJ },
            mark: { type: "line", point: true, tooltip: true },
            encoding: {
              x: levelAxis(mode),
              y: { field: "tok_per_j", type: "quantitative", title: "output tok/J" },
            },
          },
        }
      : {}),
  };
}
