/**
 * Reading a file the user named (a dataset, a trace, tools, a results document): only a regular
 * file is read. A FIFO that never gets data blocks the read, and with it every signal handler
 * (SIGTERM included); a character device such as /dev/zero never ends; a directory is not data.
 */
import { readFileSync, statSync } from "node:fs";

/** What a path is when it is not a regular file, in the user's words. */
function kindOf(path: string): string | null {
  const st = statSync(path);
  if (st.isFile()) return null;
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * The file's bytes, or `fail(detail)` with what went wrong: it cannot be read (its errno), or it
 * is not a regular file (what it is, and what to do instead).
 */
export function readRegularFile(path: string, fail: (detail: string) => Error): Buffer {
  let kind: string | null;
  try {
    kind = kindOf(path);
    if (kind === null) return readFileSync(path);
  } catch (err) {
    throw fail(`cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  throw fail(
    `is ${kind}, not a regular file: tokenbench reads a file whole before it starts, so it reads only regular files; write the data to a file and pass that`,
  );
}
