/**
 * Results files on disk: the JSON document with its CSV and Markdown beside it, the per-request
 * JSON Lines file, and reading them back (resume, report, compare). Every write is atomic
 * (temporary file, then rename), and the JSONL file is written before the document that
 * references it, so a kill at any moment leaves a consistent pair.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { TokenbenchError } from "../../schema/errors.ts";
import {
  parseResultDocument,
  type RequestRecord,
  type ResultDocument,
  SchemaError,
} from "../../schema/v1.ts";
import { csvTable, markdownReport } from "./report.ts";

export type RecordsMode = "inline" | "file" | "none";

export class ResultsFileError extends TokenbenchError {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super("results_file_invalid", `${path}: ${message}`);
  }
}

/**
 * Fail before any load is sent when `jsonPath` cannot be written (a read-only or missing
 * directory, a path that is a directory): a probe file is created and removed beside it.
 */
export function assertWritable(jsonPath: string): void {
  const probe = `${jsonPath}.probe-${process.pid}`;
  try {
    mkdirSync(dirname(jsonPath), { recursive: true });
    writeFileSync(probe, "");
    unlinkSync(probe);
    if (existsSync(jsonPath) && statSync(jsonPath).isDirectory())
      throw Object.assign(new Error(), { code: "EISDIR" });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new TokenbenchError(
      "out_unwritable",
      `cannot write results to ${jsonPath} (${code}); nothing was sent. Check the directory exists and is writable, or choose another --out`,
    );
  }
}

function atomicWrite(path: string, data: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

export interface OutputPaths {
  json: string;
  csv: string;
  md: string;
  requestsFile: string;
}

export function outputPaths(jsonPath: string): OutputPaths {
  const stem = jsonPath.replace(/\.json$/i, "");
  return { json: jsonPath, csv: `${stem}.csv`, md: `${stem}.md`, requestsFile: `${stem}.requests.jsonl` };
}

export function siblingPath(jsonPath: string, file: string): string {
  return join(dirname(jsonPath), file);
}

/** The path as it is on disk: symbolic links followed where it exists (else as written). */
const onDisk = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));

/**
 * `path` (relative to `folder`) when it lies inside `folder` once `..`, absolute paths and
 * symbolic links are followed, else null: a path read from a document or an input must not
 * lead the reader elsewhere on the machine.
 */
export function pathInside(folder: string, path: string): string | null {
  const abs = resolve(folder, path);
  const rel = relative(onDisk(folder), onDisk(abs));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel)) ? abs : null;
}

/** Like pathInside, or a `path_outside` error that names who asked and where it must stay. */
export function insideOrRefuse(folder: string, path: string, what: string): string {
  const p = pathInside(folder, path);
  if (p === null)
    throw new TokenbenchError(
      "path_outside",
      `${what} "${path}" leads outside ${resolve(folder)}; it is not read. Keep the file inside that folder (a symbolic link out of it counts as outside)`,
    );
  return p;
}

/**
 * Validate, then write the JSON document (and CSV + Markdown beside it). With `recordsMode`
 * "file", per-request records go to a sibling JSON Lines file referenced from the document.
 */
export function writeResults(
  doc: ResultDocument,
  jsonPath: string,
  records: readonly RequestRecord[],
  recordsMode: RecordsMode,
): OutputPaths {
  const paths = outputPaths(jsonPath);
  const out: ResultDocument = { ...doc, requests: null, requests_file: null };
  if (recordsMode === "inline") out.requests = [...records];
  else if (recordsMode === "file") {
    out.requests_file = basename(paths.requestsFile);
    atomicWrite(
      paths.requestsFile,
      records.map((r) => JSON.stringify(r)).join("\n") + (records.length ? "\n" : ""),
    );
  }
  try {
    parseResultDocument(out);
  } catch (err) {
    // Nothing measured is lost to the final check: the document goes beside the results as it is.
    if (!(err instanceof SchemaError)) throw err;
    const invalid = paths.json.replace(/\.json$/, "") + ".invalid.json";
    atomicWrite(invalid, `${JSON.stringify(out, null, 1)}\n`);
    throw new TokenbenchError(
      "results_unwritable_schema",
      `what was measured does not fit schema v1 (${err.issues
        .slice(0, 3)
        .map((i) => `${i.path}: ${i.message}`)
        .join("; ")}): everything is in ${invalid}; please report it with that file`,
    );
  }
  atomicWrite(paths.json, `${JSON.stringify(out, null, 1)}\n`);
  atomicWrite(paths.csv, csvTable(out.levels));
  atomicWrite(paths.md, `${markdownReport(out)}\n`);
  return paths;
}

/** Read and validate a results document; errors name the file and what is wrong with it. */
export function readResultsDocument(path: string): ResultDocument {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ResultsFileError(path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ResultsFileError(path, "is not valid JSON (truncated or not a tokenbench results file?)");
  }
  try {
    return parseResultDocument(raw);
  } catch (err) {
    if (err instanceof SchemaError) throw new ResultsFileError(path, err.message);
    throw err;
  }
}

const unlistedOf = (doc: ResultDocument, records: readonly RequestRecord[]) => {
  const listed = new Set(doc.levels.map((l) => l.level));
  return doc.kind === "sweep" ? records.filter((r) => !listed.has(r.level)) : [];
};

/**
 * A document with its per-request records, wherever they are kept (inline or JSONL beside it).
 * A sweep's records belong to the levels it lists. Inline, a record at another level is a
 * document that was edited or mixed up: refused by name. In the JSONL file, records at a level the
 * document does not list yet are a level that was in progress when the run was killed (the file is
 * written first): they are left out of `records` and counted in `unlisted`, for the caller to say.
 */
export function readResults(path: string): {
  doc: ResultDocument;
  records: RequestRecord[];
  unlisted: number;
} {
  const doc = readResultsDocument(path);
  if (doc.requests !== null) {
    const stray = unlistedOf(doc, doc.requests);
    if (stray.length > 0)
      throw new ResultsFileError(
        path,
        `${stray.length} per-request record(s) are at level(s) ${[...new Set(stray.map((r) => r.level))].slice(0, 5).join(", ")}, which the document's levels (${doc.levels.map((l) => l.level).join(", ")}) do not list: the records and the document do not belong together`,
      );
    return { doc, records: doc.requests, unlisted: 0 };
  }
  if (!doc.requests_file) return { doc, records: [], unlisted: 0 };
  // A document names its records file beside it; one that points elsewhere is not followed.
  const p = insideOrRefuse(dirname(path), doc.requests_file, `${path}: requests_file`);
  if (!existsSync(p)) return { doc, records: [], unlisted: 0 };
  const records: RequestRecord[] = [];
  readFileSync(p, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        records.push(JSON.parse(line) as RequestRecord);
      } catch {
        throw new ResultsFileError(p, `line ${i + 1} is not valid JSON`);
      }
    });
  const stray = new Set(unlistedOf(doc, records));
  return { doc, records: records.filter((r) => !stray.has(r)), unlisted: stray.size };
}
