/**
 * Credentials and commands in the Action's output. The runner hides what `core.setSecret` registers, but only
 * in its own log view: the job summary, step outputs, the PR comment and runs outside a hosted
 * runner (act, a wrapper that captures the step's output, these tests) see the raw text. So every
 * secret input (and every credential header) is registered with the runner at start, and the
 * process masks them itself in all it writes to stdout and stderr and in the files and comment
 * it produces (`masked`).
 */
import * as core from "@actions/core";
import { redacted, secretsIn, urlSecrets } from "../core/server/target.ts";
import { ACTION_INPUTS } from "./inputs.ts";

const known = new Set<string>();
let patched = false;
// core.setSecret announces the value on stdout (`::add-mask::VALUE`): that line must pass unmasked
let registering = false;

/**
 * The raw values of the secret inputs, the credentials among the `headers` input's lines, and the
 * user and password (or a key in the query) of any input that is a URL (`base-url`,
 * `gpu-metrics-url`, ...: http://user:pw@host is a secret in every one).
 */
export function secretInputs(get: (name: string) => string): string[] {
  const values: string[] = [];
  for (const s of Object.values(ACTION_INPUTS)) {
    if (s.input === null) continue;
    const v = get(s.input).trim();
    if (v === "") continue;
    if (s.secret) values.push(v);
    for (const u of v.match(/\bhttps?:\/\/\S+/g) ?? []) values.push(...urlSecrets(u));
  }
  const headers: Record<string, string> = {};
  for (const line of get("headers").split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  values.push(...secretsIn(headers));
  // a key also travels as its Bearer header, URL-encoded, or base64 (Basic auth)
  return values.flatMap((v) => [v, encodeURIComponent(v), Buffer.from(v).toString("base64")]);
}

/** `text` with every registered secret replaced by `***`. */
export const masked = (text: string): string => redacted(text, [...known]);

/**
 * `text` that cannot issue a workflow command: a line that starts with `::` (after any blanks) is
 * one to the runner (`::error::`, `::add-mask::`, `::stop-commands::`), and text from the server
 * under test (an error body, its model id, its own log) reaches the log inside the Action's lines.
 * Every line but a write's first gets a zero-width space between its colons: it reads the same and
 * commands nothing. A write's first line is the Action's own (a fixed prefix, or @actions/core's
 * command, whose data it escapes: a newline is %0A there).
 */
export function inert(text: string): string {
  return text.replace(/([\r\n][ \t]*):(?=:)/g, "$1:\u200b");
}

/** Registers secrets with the runner and masks them in this process's stdout and stderr from now on. */
export function maskSecrets(values: readonly string[]): void {
  for (const v of values) {
    if (v.length < 4 || known.has(v)) continue;
    known.add(v);
    registering = true;
    try {
      core.setSecret(v);
    } finally {
      registering = false;
    }
  }
  if (patched) return;
  patched = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      write(
        !registering && (typeof chunk === "string" || Buffer.isBuffer(chunk))
          ? inert(masked(chunk.toString()))
          : chunk,
        ...rest,
      )) as typeof stream.write;
  }
}
