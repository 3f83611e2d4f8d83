/**
 * Results files on disk: the JSON document with its CSV and Markdown beside it, the per-request
 * JSON Lines file, and reading them back (resume, report, compare). Every write is atomic
 * (temporary file, then rename), and the JSONL file is written before the document that
 * references it, so a kill at any moment leaves a consistent pair.
 */
import {
  existsSync,
  mkdirSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { TokenbenchError, UsageError } from "../../schema/errors.ts";
import {
  parseResultDocument,
  type RequestRecord,
  type ResultDocument,
  SchemaError,
} from "../../schema/v1.ts";
import { readRegularFile } from "../workload/regular-file.ts";
import { csvTable } from "./csv.ts";
import { markdownReport } from "./report.ts";

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

/** What a failed write's errno means to the user: the cause, and what to do about it. */
const ROOM = "free space there (or raise the limit), or choose another --out";
const PATH = "check the path, or choose another --out";
const WRITE_CAUSES: Record<string, [string, string]> = {
  ENOSPC: ["the disk is full", ROOM],
  EDQUOT: ["the disk quota is used up", ROOM],
  EFBIG: ["the file is over this process's file-size limit (ulimit -f)", ROOM],
  EIO: ["the disk reported an I/O error", "check the disk, or choose another --out"],
  EROFS: ["the file system is read-only", PATH],
  EACCES: ["no permission to write there", PATH],
  EPERM: ["no permission to write there", PATH],
  ENOTDIR: ["a part of the path is a file, not a folder", PATH],
  EEXIST: ["a part of the path is a file, not a folder", PATH],
  EISDIR: ["the path is a folder", PATH],
};

/** A write that failed, with its temporary file removed. */
class WriteFailed extends Error {
  constructor(
    readonly path: string,
    readonly errno: string,
  ) {
    super(`${path}: ${errno}`);
  }
}

function atomicWrite(path: string, data: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (err) {
    // A half-written temporary file is never left behind (a full disk would keep it full).
    try {
      unlinkSync(tmp);
    } catch {}
    throw new WriteFailed(path, (err as NodeJS.ErrnoException).code ?? "error");
  }
}

/**
 * The results could not be written where asked: the document is tried once in the system's
 * temporary folder (often another file system), and the error names the file, the cause, what was
 * kept and the next step.
 */
function unwritten(
  failed: WriteFailed,
  doc: ResultDocument | null,
  written: readonly string[],
): TokenbenchError {
  const [cause, remedy] = WRITE_CAUSES[failed.errno] ?? ["the write failed", PATH];
  let kept = written.length > 0 ? `written before it: ${written.join(", ")}` : "nothing was written there";
  if (doc !== null) {
    const spare = join(tmpdir(), `tokenbench-${process.pid}-${basename(failed.path)}`);
    try {
      atomicWrite(spare, `${JSON.stringify(doc, null, 1)}\n`);
      kept += `; the whole document (every request inline) is in ${spare}`;
    } catch (err) {
      if (!(err instanceof WriteFailed)) throw err;
      kept += `; ${spare} could not be written either (${err.errno}), so the measured data is lost`;
    }
  }
  return new TokenbenchError(
    "results_unwritten",
    `could not write ${failed.path}: ${cause} (${failed.errno}); no partial file is left. ${kept[0]!.toUpperCase()}${kept.slice(1)}. Next: ${remedy}, and run again`,
  );
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

/**
 * Refuse an output that would overwrite one of the inputs it is made from (`merge --out` naming a
 * shard, or its CSV, Markdown or records file landing on one): the input would be lost half-way.
 */
export function refuseOverwrite(
  jsonOut: string,
  inputs: readonly { path: string; doc: ResultDocument }[],
  remedy = "choose another --out (e.g. merged.json)",
): void {
  const outs = Object.values(outputPaths(jsonOut)).map(onDisk);
  for (const input of inputs) {
    const read = [input.path];
    if (input.doc.requests_file) read.push(join(dirname(input.path), input.doc.requests_file));
    for (const r of read)
      if (outs.includes(onDisk(r)))
        throw new UsageError(
          `writing ${jsonOut} would overwrite ${r}, which is one of the inputs: ${remedy}`,
        );
  }
}

/** Like pathInside, or a `path_outside` error that names who asked and where it must stay. */
export function insideOrRefuse(folder: string, path: string, what: string): string {
  const p = pathInside(folder, path);
  if (p === null)
    throw new TokenbenchError(
      "path_outside",
      `${what} "${path}" leads outside ${resolve(folder)}; nothing is read from or written to it. Keep the path inside that folder (a symbolic link out of it counts as outside)`,
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
  else if (recordsMode === "file") out.requests_file = basename(paths.requestsFile);
  try {
    parseResultDocument(out);
  } catch (err) {
    // Nothing measured is lost to the final check: the document goes beside the results as it is.
    if (!(err instanceof SchemaError)) throw err;
    const invalid = paths.json.replace(/\.json$/, "") + ".invalid.json";
    writeOrExplain(
      [[invalid, () => `${JSON.stringify({ ...out, requests: [...records] }, null, 1)}\n`]],
      null,
    );
    throw new TokenbenchError(
      "results_unwritable_schema",
      `what was measured does not fit schema v1 (${err.issues
        .slice(0, 3)
        .map((i) => `${i.path}: ${i.message}`)
        .join("; ")}): everything is in ${invalid}; please report it with that file`,
    );
  }
  const files: [string, () => string][] = [];
  // The JSONL file goes first: a kill between the two leaves records no document names yet.
  if (recordsMode === "file")
    files.push([
      paths.requestsFile,
      () => records.map((r) => JSON.stringify(r)).join("\n") + (records.length ? "\n" : ""),
    ]);
  files.push(
    [paths.json, () => `${JSON.stringify(out, null, 1)}\n`],
    [paths.csv, () => csvTable(out.levels)],
    [paths.md, () => `${markdownReport(out)}\n`],
  );
  writeOrExplain(files, { doc: { ...out, requests: [...records], requests_file: null }, path: paths.json });
  return paths;
}

/** Write each file in order; on the first that fails, a `results_unwritten` error (see unwritten). */
function writeOrExplain(
  files: readonly [string, () => string][],
  whole: { doc: ResultDocument; path: string } | null,
): void {
  const written: string[] = [];
  for (const [path, data] of files) {
    try {
      atomicWrite(path, data());
    } catch (err) {
      if (!(err instanceof WriteFailed)) throw err;
      // once the document itself is written, nothing measured is missing
      const docWritten = whole !== null && written.includes(whole.path);
      throw unwritten(err, docWritten ? null : (whole?.doc ?? null), written);
    }
    written.push(path);
  }
}

/** Read and validate a results document; errors name the file and what is wrong with it. */
export function readResultsDocument(path: string): ResultDocument {
  const text = readRegularFile(path, (detail) => new ResultsFileError(path, detail)).toString("utf8");
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
  readRegularFile(p, (detail) => new ResultsFileError(p, detail))
    .toString("utf8")
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
