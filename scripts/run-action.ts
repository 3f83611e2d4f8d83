// Runs the committed Action bundle (dist/index.js) the way a runner does: INPUT_* and GITHUB_*
// variables, an event payload file, output/summary/state files. Used by the demo.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");

export function node24(): string {
  const p = [process.env.TOKENBENCH_NODE24, resolve(ROOT, ".cache/node24/node_modules/.bin/node")].find(
    (x) => x && existsSync(x),
  );
  return p ?? process.execPath;
}

export function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /^([^<\n]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out[m[1]!] = m[3]!;
  return out;
}

export async function runAction(
  inputs: Record<string, string>,
  github: Record<string, string>,
  payload: unknown,
  /** `workspace`: the job's workspace (GITHUB_WORKSPACE and the working directory), default a new folder. */
  opts: { echo?: boolean; env?: Record<string, string>; workspace?: string } = {},
): Promise<{
  code: number | null;
  log: string;
  outputs: Record<string, string>;
  summary: string;
  state: string;
  dir: string;
}> {
  const dir = mkdtempSync(join(tmpdir(), "tokenbench-action-"));
  const f = {
    out: join(dir, "output"),
    summary: join(dir, "summary"),
    state: join(dir, "state"),
    event: join(dir, "event.json"),
  };
  for (const p of [f.out, f.summary, f.state]) writeFileSync(p, "");
  writeFileSync(f.event, JSON.stringify(payload ?? {}));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    // the caller's temporary folder (a test run's own, which it removes) and its run id
    TMPDIR: tmpdir(),
    ...(process.env.TOKENBENCH_TEST_RUN ? { TOKENBENCH_TEST_RUN: process.env.TOKENBENCH_TEST_RUN } : {}),
    GITHUB_OUTPUT: f.out,
    GITHUB_STEP_SUMMARY: f.summary,
    GITHUB_STATE: f.state,
    GITHUB_EVENT_PATH: f.event,
    GITHUB_WORKSPACE: opts.workspace ?? dir,
    ...github,
    ...opts.env,
  };
  // a folder of its own inside the workspace (a job in a shared workspace does not overwrite another's)
  const results = opts.workspace ? join(opts.workspace, `results-${basename(dir)}`) : join(dir, "results");
  for (const [k, v] of Object.entries({ "results-dir": results, ...inputs }))
    env[`INPUT_${k.toUpperCase()}`] = v;
  return new Promise((res) => {
    const p = spawn(node24(), [resolve(ROOT, "dist/index.js")], { cwd: opts.workspace ?? dir, env });
    let log = "";
    const on = (d: Buffer) => {
      log += d;
      if (opts.echo) process.stderr.write(d);
    };
    p.stdout.on("data", on);
    p.stderr.on("data", on);
    p.on("close", (code) =>
      res({
        code,
        log,
        outputs: parseOutputs(readFileSync(f.out, "utf8")),
        summary: readFileSync(f.summary, "utf8"),
        state: readFileSync(f.state, "utf8"),
        dir,
      }),
    );
  });
}
