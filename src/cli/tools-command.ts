/** `tokenbench report | compare | import | export`: working with saved result documents. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { compareDocuments, compareMarkdown } from "../core/compare-docs.ts";
import { exportGab, ImportError, importVllm } from "../core/interop.ts";
import { writePlots } from "../core/plots.ts";
import { markdownTable } from "../core/report.ts";
import { parseResultDocument, type ResultDocument } from "../schema/v1.ts";
import { DEFAULT_THRESHOLDS } from "../shared/statistics.ts";
import { bool, num, oneOf, parse, str, UsageError } from "./args.ts";

function loadDoc(path: string | undefined, what: string): ResultDocument {
  if (!path) throw new UsageError(`missing ${what}`);
  if (!existsSync(path)) throw new UsageError(`${what} ${path} does not exist`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new UsageError(`${what} ${path} is not valid JSON`);
  }
  const doc = parseResultDocument(raw);
  if (doc.requests === null && doc.requests_file) {
    const p = join(dirname(path), doc.requests_file);
    if (existsSync(p))
      doc.requests = readFileSync(p, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
  }
  return doc;
}

export const plotsDir = (jsonPath: string) => jsonPath.replace(/\.json$/i, "") + "-plots";

export async function reportCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, {
    "out-dir": { type: "string" },
    png: { type: "string" },
    baseline: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (v.help) {
    process.stdout.write(
      "tokenbench report results.json [--out-dir DIR] [--png true|false] [--baseline base.json]\n  re-render the Markdown table and the SVG/PNG charts from a saved document\n",
    );
    return 0;
  }
  const path = positionals[0];
  const doc = loadDoc(path, "results file");
  const baseline = typeof v.baseline === "string" ? loadDoc(v.baseline, "baseline file") : undefined;
  const dir = str(v, "out-dir", plotsDir(path!));
  const files = await writePlots(doc, dir, { png: bool(v, "png", true), ...(baseline ? { baseline } : {}) });
  if (doc.kind === "sweep") process.stdout.write(`${markdownTable(doc.levels)}\n`);
  process.stderr.write(`wrote ${files.length} charts to ${dir}: ${files.map((f) => f.name).join(", ")}\n`);
  return 0;
}

export async function compareCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, {
    format: { type: "string" },
    out: { type: "string" },
    "threshold-pct": { type: "string" },
    confidence: { type: "string" },
    "min-effect-pct": { type: "string" },
    iterations: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (v.help) {
    process.stdout.write(`tokenbench compare base.json head.json [--format md|json] [--out FILE]
  per level and measure: base, head, delta % and a verdict. Latency measures with per-request
  samples on both sides: a seeded bootstrap interval on the percentile difference (must exclude 0
  and exceed --min-effect-pct, default 1). Other measures: |delta %| > --threshold-pct (default 5).
  Exit code 1 when any measure regressed, 0 otherwise, 2 for usage errors.
`);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError("expected two files: base.json head.json");
  const base = loadDoc(positionals[0], "base file");
  const head = loadDoc(positionals[1], "head file");
  if (base.kind !== head.kind) throw new UsageError(`cannot compare a ${base.kind} with a ${head.kind}`);
  const rows = compareDocuments(base, head, {
    thresholds: {
      ...DEFAULT_THRESHOLDS,
      pct: num(v, "threshold-pct", DEFAULT_THRESHOLDS.pct, (n) => n >= 0, "a non-negative number")!,
      confidence: num(
        v,
        "confidence",
        DEFAULT_THRESHOLDS.confidence,
        (n) => n > 0.5 && n < 1,
        "in (0.5, 1)",
      )!,
    },
    minEffectPct: num(v, "min-effect-pct", 1, (n) => n >= 0, "a non-negative number")!,
    iterations: num(v, "iterations", 1000, (n) => Number.isInteger(n) && n >= 100, "an integer >= 100")!,
  });
  const format = oneOf(v, "format", ["md", "json"] as const, "md");
  const text =
    format === "json"
      ? `${JSON.stringify({ base: positionals[0], head: positionals[1], rows }, null, 1)}\n`
      : `${compareMarkdown(rows)}\n`;
  const out = str(v, "out", null);
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text);
  } else process.stdout.write(text);
  return rows.some((r) => r.verdict === "regressed") ? 1 : 0;
}

export async function importCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, {
    out: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (v.help || positionals[0] !== "vllm") {
    if (!v.help) throw new UsageError("usage: tokenbench import vllm RESULT.json --out results.json");
    process.stdout.write(
      "tokenbench import vllm RESULT.json --out results.json\n  convert a `vllm bench serve --save-result` JSON into schema v1\n",
    );
    return 0;
  }
  const file = positionals[1];
  if (!file || !existsSync(file)) throw new UsageError(`no such file: ${file ?? "(missing)"}`);
  let doc: ResultDocument;
  try {
    doc = parseResultDocument(
      importVllm(JSON.parse(readFileSync(file, "utf8")), `vllm bench serve (${file})`),
    );
  } catch (err) {
    if (err instanceof ImportError || err instanceof SyntaxError)
      throw new UsageError(`${file}: ${(err as Error).message}`);
    throw err;
  }
  const out = str(v, "out", file.replace(/\.json$/i, "") + ".tokenbench.json");
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`);
  process.stdout.write(`${markdownTable(doc.levels)}\n`);
  process.stderr.write(`wrote ${out}\n`);
  return 0;
}

export async function exportCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, {
    "out-dir": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (v.help || positionals[0] !== "gab") {
    if (!v.help) throw new UsageError("usage: tokenbench export gab results.json [--out-dir DIR]");
    process.stdout.write(
      "tokenbench export gab results.json [--out-dir DIR]\n  write github-action-benchmark customSmallerIsBetter.json and customBiggerIsBetter.json\n",
    );
    return 0;
  }
  const doc = loadDoc(positionals[1], "results file");
  const dir = str(v, "out-dir", dirname(positionals[1]!));
  mkdirSync(dir, { recursive: true });
  const { smaller, bigger } = exportGab(doc);
  writeFileSync(join(dir, "customSmallerIsBetter.json"), `${JSON.stringify(smaller, null, 1)}\n`);
  writeFileSync(join(dir, "customBiggerIsBetter.json"), `${JSON.stringify(bigger, null, 1)}\n`);
  process.stderr.write(
    `wrote ${smaller.length} smaller-is-better and ${bigger.length} bigger-is-better entries to ${dir}\n`,
  );
  return 0;
}
