/**
 * Export to other tools: github-action-benchmark's `customSmallerIsBetter` /
 * `customBiggerIsBetter` JSON and the Bencher Metric Format.
 */
import { TokenbenchError } from "../../schema/errors.ts";
import type { ResultDocument } from "../../schema/v1.ts";
import { documentPoints, MEASURE_BY_NAME } from "../../shared/measures.ts";

export class ExportError extends TokenbenchError {
  constructor(message: string) {
    super("export_empty", message);
  }
}

/** The measured points of a document, or an error naming the file and the field that is empty. */
function exportable(doc: ResultDocument, source: string) {
  if (doc.kind === "sweep" && doc.levels.length === 0)
    throw new ExportError(
      `${source}: levels is empty: the document holds no finished level (a run stopped before its first level ended?), so there is nothing to export`,
    );
  const points = documentPoints(doc).filter(
    (p) => MEASURE_BY_NAME.has(p.measure) && Number.isFinite(p.value),
  );
  if (points.length === 0)
    throw new ExportError(
      `${source}: no level has a measured value (every request failed?), so there is nothing to export`,
    );
  return points;
}

export interface GabEntry {
  name: string;
  unit: string;
  value: number;
  extra?: string;
}

/** github-action-benchmark custom tools: one list per direction. */
export function exportGab(
  doc: ResultDocument,
  source = "the document",
): { smaller: GabEntry[]; bigger: GabEntry[] } {
  const smaller: GabEntry[] = [];
  const bigger: GabEntry[] = [];
  for (const p of exportable(doc, source)) {
    const def = MEASURE_BY_NAME.get(p.measure)!;
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
export function exportBencher(
  doc: ResultDocument,
  source = "the document",
): Record<string, Record<string, { value: number }>> {
  const out: Record<string, Record<string, { value: number }>> = {};
  for (const p of exportable(doc, source)) {
    const bench = out[p.benchmark] ?? {};
    bench[p.measure.replace(/_/g, "-")] = { value: p.value };
    out[p.benchmark] = bench;
  }
  return out;
}
