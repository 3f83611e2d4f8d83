/** `tokenbench report | compare | plan | import | export | merge`: working with saved result documents. */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { compareDocuments, compareMarkdown } from "../core/documents/compare.ts";
import { exportBencher, exportGab } from "../core/documents/export.ts";
import { ImportError, importVllmMany, vllmResultsIn } from "../core/documents/import-vllm.ts";
import { mergeShards } from "../core/documents/merge.ts";
import { planMarkdown, planRun } from "../core/documents/plan.ts";
import { ResultsFileError, readResults, refuseOverwrite, writeResults } from "../core/results/files.ts";
import { writePlots } from "../core/results/plots.ts";
import { markdownReport, markdownTable } from "../core/results/report.ts";
import { CLI_OUTPUT, GATING, TOOLS } from "../core/settings/table.ts";
import { readRegularFile } from "../core/workload/regular-file.ts";
import { UsageError } from "../schema/errors.ts";
import { parseResultDocument, type ResultDocument } from "../schema/v1.ts";
import { workloadText } from "../shared/comparison.ts";
import {
  DEFAULT_FAIL_ON,
  DEFAULT_GATE_TEXT,
  parseGate,
  parseRules,
  type Rules,
  RulesError,
} from "../shared/rules.ts";
import { summaryFails } from "../shared/verdict.ts";
import { failureLine, headline } from "../shared/verdict-text.ts";
import { sloGiven, workloadDiff } from "../shared/workload.ts";
import { parseCommand, plotsDir } from "./command.ts";

export function loadDoc(path: string | undefined, what: string): ResultDocument {
  if (!path) throw new UsageError(`missing ${what}`);
  // A file that is missing or cannot be read is the file's fault, not the command line's: exit 1
  // with the code the error table names (results_file_invalid), as for a file that is not one.
  if (!existsSync(path))
    throw new ResultsFileError(
      path,
      `(the ${what}) does not exist: check the path, or run the sweep that writes it`,
    );
  let loaded: ReturnType<typeof readResults>;
  try {
    loaded = readResults(path);
  } catch (err) {
    if (err instanceof ResultsFileError)
      throw new ResultsFileError(err.path, `(the ${what}) ${err.message.slice(err.path.length + 2)}`);
    throw err;
  }
  const { doc, records, unlisted } = loaded;
  if (unlisted > 0)
    process.stderr.write(
      `notice: ${path}: ${unlisted} records at a level the document does not list (a level in progress when the run was killed) are left out\n`,
    );
  return doc.requests === null && records.length > 0 ? { ...doc, requests: records } : doc;
}

export async function reportCommand(argv: string[]): Promise<number> {
  const { outDir, png, baseline: baseFile } = TOOLS;
  const p = parseCommand(
    argv,
    { outDir, png, baseline: baseFile },
    "tokenbench report results.json: re-render the Markdown table and the SVG/PNG charts from a saved document",
  );
  if (p === null) return 0;
  const v = p.values;
  const path = p.positionals[0];
  if (p.positionals.length > 1)
    throw new UsageError(
      `report reads one results file, got ${p.positionals.length}: run it once per file, or compare them with tokenbench compare`,
    );
  const doc = loadDoc(path, "results file");
  const baseline = v.baseline !== null ? loadDoc(v.baseline, "baseline file") : undefined;
  const dir = v.outDir ?? plotsDir(path!);
  const files = await writePlots(doc, dir, { png: v.png, ...(baseline ? { baseline } : {}) });
  if (doc.kind === "sweep") process.stdout.write(`${markdownReport(doc)}\n`);
  process.stderr.write(`wrote ${files.length} charts to ${dir}: ${files.map((f) => f.name).join(", ")}\n`);
  return 0;
}

export async function planCommand(argv: string[]): Promise<number> {
  const { format, out, detectPct } = TOOLS;
  const { gate, gateFwer } = GATING;
  const p = parseCommand(
    argv,
    { format, out, detectPct, gate, gateFwer },
    `tokenbench plan run.json run.json [more runs ...]
  how big a run must be to detect a change of --detect-pct (default 10 %), from two or more runs
  of one workload on one testbed (a history of its base branch): each measure's noise between
  runs split into what its requests make (shrinks with more requests) and the rest (run-to-run:
  only more runs of history or an A/B job see past it), the change each row can detect now at
  80 % power as the gate judges it, and the requests per level, runs of history or A/B pairs that
  would detect --detect-pct, with their minutes (CONCEPTS.md "Planning a run"). Exit 0, or 2 for
  usage errors.`,
  );
  if (p === null) return 0;
  const v = p.values;
  if (p.positionals.length < 2)
    throw new UsageError("expected two or more results files of one workload (runs of the base branch)");
  const docs = p.positionals.map((path) => loadDoc(path, "results file"));
  const sweeps = docs.filter((d) => d.kind === "sweep");
  if (sweeps.length < 2)
    throw new UsageError("plan needs two or more sweep documents (a profile has no levels to plan)");
  for (const [i, d] of sweeps.entries()) {
    const diff = workloadDiff(sweeps[0]!, d);
    if (diff.length > 0)
      throw new UsageError(
        `${p.positionals[i]} measured another workload than ${p.positionals[0]} (${workloadText(diff.map((x) => ({ field: x.field, base: x.a, head: x.b })))}): plan from runs of one workload`,
      );
  }
  try {
    parseGate(v.gate);
  } catch (err) {
    if (err instanceof RulesError) throw new UsageError(`--gate: ${err.message}`, "--gate");
    throw err;
  }
  const o = { detectPct: v.detectPct, gate: v.gate, fwerPct: v.gateFwer };
  const rows = planRun(sweeps, o);
  const text =
    v.format === "json"
      ? `${JSON.stringify({ detect_pct: v.detectPct, rows }, null, 1)}\n`
      : `${planMarkdown(rows, o)}\n`;
  if (v.out !== null) writeFileSync(v.out, text);
  else process.stdout.write(text);
  return 0;
}

export async function compareCommand(argv: string[]): Promise<number> {
  const { format, out, thresholdPct, confidence, minEffectPct, iterations } = TOOLS;
  const { thresholds, gate, gateFwer, failOn: failOnSetting } = GATING;
  const { allowDifferentWorkloads } = TOOLS;
  const p = parseCommand(
    argv,
    {
      format,
      out,
      thresholds,
      gate,
      gateFwer,
      failOn: failOnSetting,
      allowDifferentWorkloads,
      thresholdPct,
      confidence,
      minEffectPct,
      iterations,
    },
    `tokenbench compare base.json [more-base.json ...] head.json
  one verdict per level and measure, from the same engine as the PR comment, the dashboard and
  the results service (CONCEPTS.md "Comparing runs"). The first line is the headline, led by the
  gate: its rows (--gate, default ${DEFAULT_GATE_TEXT}) decide, one-sided, with the
  false-fail rate per pull request held at --gate-fwer; every other row is informational. One
  base file is one run; several are a history (the gate needs 5+); a head run with --ab holds its
  own base. The method follows the evidence and is named per row with its unit (ab-paired per
  block, history-t per job, repeats-t within one job, bootstrap within one run, exact test per
  request, percent). A base of another workload is no baseline (its fields named) unless
  --allow-different-workloads; a level on one side only has no baseline. Exit 1 when the
  comparison fails --fail-on (default regression: the gate failed), 0 otherwise, 2 for usage
  errors.`,
  );
  if (p === null) return 0;
  const v = p.values;
  const positionals = p.positionals;
  if (positionals.length < 1)
    throw new UsageError("expected two or more files: base.json [more-base.json ...] head.json");
  const basePaths = positionals.slice(0, -1);
  const headPath = positionals[positionals.length - 1]!;
  const bases = basePaths.map((b) => ({ id: b, doc: loadDoc(b, "base file") }));
  const head = { id: headPath, doc: loadDoc(headPath, "head file") };
  // An A/B job holds its own base (its base blocks); any other head needs a base file.
  if (bases.length === 0 && !head.doc.ab)
    throw new UsageError(
      "expected two or more files: base.json [more-base.json ...] head.json (one file only for a sweep run with --ab-base-url, which holds its own base)",
    );
  for (const base of bases)
    if (base.doc.kind !== head.doc.kind)
      throw new UsageError(`cannot compare a ${base.doc.kind} with a ${head.doc.kind}`);
  let rules: Rules;
  try {
    rules = parseRules(v.thresholds);
    parseGate(v.gate, rules);
  } catch (err) {
    if (err instanceof RulesError) {
      const flag = err.message.startsWith("gate") ? "--gate" : "--thresholds";
      throw new UsageError(`${flag}: ${err.message}`, flag);
    }
    throw err;
  }
  const failOn = v.failOn ?? DEFAULT_FAIL_ON;
  const summary = compareDocuments(bases, head, {
    rules,
    gate: v.gate,
    fwerPct: v.gateFwer,
    fallbackPct: v.thresholdPct,
    confidence: v.confidence,
    minEffectPct: v.minEffectPct,
    iterations: v.iterations,
    allowDifferentWorkloads: v.allowDifferentWorkloads,
  });
  for (const o of summary.other_workloads)
    process.stderr.write(
      `notice: ${o.base} measured another workload (${workloadText(o.fields)}): it is no baseline for the head; compare like with like, or pass --allow-different-workloads\n`,
    );
  const baseName =
    basePaths.length === 0
      ? "its own base blocks"
      : basePaths.length === 1
        ? basePaths[0]!
        : `${basePaths.length} base files`;
  const failed = summaryFails(summary, failOn);
  const text =
    v.format === "json"
      ? `${JSON.stringify({ base: basePaths, head: headPath, headline: headline(summary), fail_on: failOn, failed, ...summary }, null, 1)}\n`
      : `${compareMarkdown(summary, baseName, head.doc)}\n`;
  const outFile = v.out;
  if (outFile) {
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, text);
    process.stdout.write(`${headline(summary)}\n`);
  } else process.stdout.write(text);
  // the exit status's reason where a script's log shows it (the report may be in a file)
  if (failed) process.stderr.write(`error: ${failureLine(summary, failOn)}\n`);
  return failed ? 1 : 0;
}

/** `tokenbench VERB KIND FILE`: a subcommand with one kind of input, e.g. `import vllm`. */
function parseKind<T extends Parameters<typeof parseCommand>[1]>(
  argv: string[],
  table: T,
  kind: string,
  usage: string,
  what: string,
) {
  const p = parseCommand(argv, table, `${usage}\n  ${what}`);
  if (p !== null && p.positionals[0] !== kind) throw new UsageError(`usage: ${usage}`);
  return p;
}

export async function importCommand(argv: string[]): Promise<number> {
  const usage = "tokenbench import vllm RESULT.json [MORE.json|APPENDED.jsonl ...] --out results.json";
  const p = parseKind(
    argv,
    { out: TOOLS.out },
    "vllm",
    usage,
    "convert `vllm bench serve --save-result` JSON (several files, or --append-result JSON Lines) into one schema-v1 document, a level per result",
  );
  if (p === null) return 0;
  const v = p.values;
  const files = p.positionals.slice(1);
  if (files.length === 0) throw new UsageError(`no result file given: ${usage}`);
  let doc: ResultDocument;
  try {
    const results = files.flatMap((file) => {
      if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
      const bytes = readRegularFile(file, (detail) => new ImportError(`${file}: ${detail}`));
      return vllmResultsIn(bytes.toString("utf8"), file);
    });
    doc = parseResultDocument(importVllmMany(results));
  } catch (err) {
    if (err instanceof SyntaxError) throw new ImportError(err.message);
    throw err;
  }
  const out = v.out ?? `${files[0]!.replace(/\.jsonl?$/i, "")}.tokenbench.json`;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`);
  process.stdout.write(`${markdownTable(doc.levels, sloGiven(doc.config))}\n`);
  process.stderr.write(`wrote ${out}\n`);
  return 0;
}

export async function exportCommand(argv: string[]): Promise<number> {
  const usage = "tokenbench export gab|bencher results.json [--out-dir DIR | --out FILE]";
  const p = parseCommand(
    argv,
    { outDir: TOOLS.outDir, out: TOOLS.out },
    `${usage}
  gab: github-action-benchmark customSmallerIsBetter.json and customBiggerIsBetter.json (--out-dir)
  bencher: Bencher Metric Format JSON (--out, default stdout), for \`bencher run --adapter json\``,
  );
  if (p === null) return 0;
  const [kind, file] = p.positionals;
  if (kind !== "gab" && kind !== "bencher") throw new UsageError(`usage: ${usage}`);
  const doc = loadDoc(file, "results file");
  if (kind === "bencher") {
    const text = `${JSON.stringify(exportBencher(doc, file!), null, 1)}\n`;
    if (p.values.out) {
      mkdirSync(dirname(p.values.out), { recursive: true });
      writeFileSync(p.values.out, text);
      process.stderr.write(`wrote ${p.values.out}\n`);
    } else process.stdout.write(text);
    return 0;
  }
  const dir = p.values.outDir ?? dirname(file!);
  mkdirSync(dir, { recursive: true });
  const { smaller, bigger } = exportGab(doc, file!);
  writeFileSync(join(dir, "customSmallerIsBetter.json"), `${JSON.stringify(smaller, null, 1)}\n`);
  writeFileSync(join(dir, "customBiggerIsBetter.json"), `${JSON.stringify(bigger, null, 1)}\n`);
  process.stderr.write(
    `wrote ${smaller.length} smaller-is-better and ${bigger.length} bigger-is-better entries to ${dir}\n`,
  );
  return 0;
}

export async function mergeCommand(argv: string[]): Promise<number> {
  const { out, clockToleranceMs } = TOOLS;
  const { records } = CLI_OUTPUT;
  const p = parseCommand(
    argv,
    { out, clockToleranceMs, records },
    `tokenbench merge shard1.json shard2.json ... --out merged.json
  the documents of one run sharded across runners (--shard i/n, same --start-at) as one document:
  every level recomputed from the union of the records. Refused (exit 1) when the workloads,
  targets or levels differ, a shard is missing or doubled, or the shards' level starts lie more
  than --clock-tolerance-ms apart.`,
  );
  if (p === null) return 0;
  const v = p.values;
  if (v.out === null) throw new UsageError("merge needs --out FILE.json");
  if (p.positionals.length < 2) throw new UsageError("merge needs the results files of at least two shards");
  const files = p.positionals.map((path) => {
    return { path, ...readResults(path) };
  });
  refuseOverwrite(v.out, files);
  const merged = mergeShards(files, { toleranceMs: v.clockToleranceMs });
  const paths = writeResults(merged.doc, v.out, merged.records, v.records);
  process.stdout.write(`${markdownTable(merged.doc.levels, sloGiven(merged.doc.config))}\n`);
  process.stderr.write(
    `merged ${files.length} shards (${merged.records.length} requests) into ${paths.json}${v.records === "file" ? `, ${paths.requestsFile}` : ""}\n`,
  );
  return 0;
}
