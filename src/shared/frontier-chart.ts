/**
 * The frontier as a chart: output tok/s (per GPU when counted) against tok/s per user, one point
 * per usable level labelled with it, the Pareto line through the frontier's points; a baseline's
 * frontier drawn grey behind. The CLI's `--plots`, `report` and the dashboard's run page draw it.
 */
import type { ResultDocument } from "../schema/v1.ts";
import { BASE, type Spec } from "./chart-base.ts";
import { frontierOf } from "./frontier.ts";

export function frontierSpec(doc: ResultDocument, baseline?: ResultDocument): Spec | null {
  const head = frontierOf(doc);
  if (!head) return null;
  const base = baseline ? frontierOf(baseline) : null;
  // per GPU only when both sides counted their GPUs (else the two would not be on one axis)
  const perGpu = head.gpus !== null && (base === null || base.gpus !== null);
  const rows = (f: NonNullable<typeof head>, series: string) =>
    f.points.map((p) => ({
      series,
      level: p.level,
      tok_s_per_user: p.tok_s_per_user,
      y: perGpu ? p.output_tok_s_per_gpu : p.output_tok_s,
      pareto: p.pareto,
    }));
  const values = [...(base ? rows(base, "base") : []), ...rows(head, base ? "head" : "run")];
  const title = perGpu ? "output tok/s per GPU" : "output tok/s";
  const x = { field: "tok_s_per_user", type: "quantitative", title: "tok/s per user (1000 / TPOT p50)" };
  const y = { field: "y", type: "quantitative", title };
  const color = {
    field: "series",
    type: "nominal",
    title: null,
    scale: { domain: base ? ["base", "head"] : ["run"], range: base ? ["#aaa", "#1f77b4"] : ["#1f77b4"] },
    ...(base ? {} : { legend: null }),
  };
  return {
    ...BASE,
    title: {
      text: "Frontier: throughput against speed per user",
      subtitle: "line: the Pareto levels; labels: the level",
    },
    data: { values },
    layer: [
      {
        transform: [{ filter: "datum.pareto" }],
        mark: { type: "line", interpolate: "linear" },
        encoding: { x, y, color, order: { field: "tok_s_per_user", type: "quantitative" } },
      },
      { mark: { type: "point", filled: true, tooltip: true }, encoding: { x, y, color } },
      {
        mark: { type: "text", dy: -9, fontSize: 10 },
        encoding: { x, y, text: { field: "level", type: "nominal" }, color },
      },
    ],
  };
}
