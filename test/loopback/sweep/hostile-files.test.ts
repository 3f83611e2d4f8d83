// Files that are not what they seem, through the CLI: a disk that fills (a file-size limit set
// with `ulimit -f`, which makes every write past it fail with EFBIG as a full disk fails with
// ENOSPC) ends in `results_unwritten` with no temporary file left; a dataset, trace, tools or
// results file that is a FIFO, a device or a folder is refused at once (a FIFO with no writer
// would block the process past SIGTERM); `merge --out` naming one of its inputs is refused before
// anything is written.
import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const tmp = mkdtempSync(join(tmpdir(), "tokenbench-hostile-files-"));
let mock: MockProcess;
beforeAll(async () => {
  mock = await startMock({ ttftMs: 5, itlMs: 1 });
}, 60_000);
afterAll(() => mock?.close());

const SWEEP = ["--levels", "1", "--requests", "12", "--max-tokens", "16", "--warmup", "0"];

/** The CLI under a file-size limit of `kb` KiB (Node ignores SIGXFSZ, so writes fail with EFBIG). */
function cliLimited(kb: number, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((res) => {
    const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const p = spawn("bash", ["-c", `ulimit -f ${kb}; exec ${quoted}`], {
      cwd: ROOT,
      env: { ...process.env, TMPDIR: tmp },
    });
    let stderr = "";
    p.stderr.on("data", (d) => {
      stderr += d;
    });
    p.on("close", (code) => res({ code, stderr }));
  });
}

describe("a disk that fills while the results are written", () => {
  it("results_unwritten names the file, the cause and the next step; no temporary file is left", {
    timeout: 60_000,
  }, async () => {
    const dir = join(tmp, "full");
    mkdirSync(dir);
    // 8 KiB: the CSV fits, the document with its requests inline does not
    const r = await cliLimited(8, [
      "sweep",
      "--base-url",
      mock.url,
      ...SWEEP,
      "--out",
      join(dir, "run.json"),
    ]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /\[results_unwritten\]: could not write .*run\.json: the file is over this process's file-size limit \(ulimit -f\) \(EFBIG\); no partial file is left/,
    );
    expect(r.stderr).toMatch(
      /Next: free space there \(or raise the limit\), or choose another --out, and run again/,
    );
    // the same limit holds for the spare in the temporary folder: said, not hidden
    expect(r.stderr).toMatch(/could not be written either \(EFBIG\), so the measured data is lost/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);
    expect(readdirSync(tmp).filter((f) => f.includes(".tmp-"))).toEqual([]);
  });

  it("with the records in a file: written first, kept, and named in the error", {
    timeout: 60_000,
  }, async () => {
    const dir = join(tmp, "full-jsonl");
    mkdirSync(dir);
    // 16 KiB: the JSON Lines file of 12 records (about 10 KiB) fits, the document (about 24) does not
    const r = await cliLimited(16, [
      "sweep",
      "--base-url",
      mock.url,
      ...SWEEP,
      "--records",
      "file",
      "--out",
      join(dir, "run.json"),
    ]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/\[results_unwritten\]: could not write .*run\.json: .*\(EFBIG\)/);
    expect(r.stderr).toMatch(/Written before it: .*run\.requests\.jsonl/);
    const lines = readFileSync(join(dir, "run.requests.jsonl"), "utf8").trim().split("\n");
    expect(lines).toHaveLength(12);
    expect(readdirSync(dir).sort()).toEqual(["run.requests.jsonl"]);
  });
});

describe("a file that is not a regular file", () => {
  const fifo = join(tmp, "pipe.jsonl");
  beforeAll(() => {
    execFileSync("mkfifo", [fifo]);
  });

  for (const [flag, code] of [
    ["--dataset", "dataset_invalid"],
    ["--trace", "trace_invalid"],
    ["--tools", "tools_invalid"],
  ] as const)
    it(`${flag} naming a FIFO with no writer: refused at once (${code}), nothing sent`, async () => {
      const t0 = Date.now();
      // a trace sets its own rate: no --levels beside it
      const args = flag === "--trace" ? SWEEP.slice(2) : SWEEP;
      const out = join(tmp, "x.json");
      const r = await runCli(["sweep", "--base-url", mock.url, ...args, flag, fifo, "--out", out], {
        timeoutMs: 20_000,
      });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`[${code}]: ${fifo}: is a FIFO (named pipe), not a regular file`);
      expect(r.stderr).toMatch(/write the data to a file and pass that/);
      expect(Date.now() - t0).toBeLessThan(15_000);
    });

  it("a device and a folder are named for what they are", async () => {
    const dev = await runCli(["sweep", "--base-url", mock.url, ...SWEEP, "--dataset", "/dev/zero"]);
    expect(dev.stderr).toContain("[dataset_invalid]: /dev/zero: is a device, not a regular file");
    const folder = await runCli(["sweep", "--base-url", mock.url, ...SWEEP.slice(2), "--trace", tmp]);
    expect(folder.stderr).toContain(`[trace_invalid]: ${tmp}: is a directory, not a regular file`);
  });

  it("report and compare refuse a results file that is a FIFO", async () => {
    for (const args of [
      ["report", fifo],
      ["compare", fifo, fifo],
    ]) {
      const r = await runCli(args, { timeoutMs: 20_000 });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        /\[results_file_invalid\]: .*pipe\.jsonl: \(the (results|base) file\) is a FIFO \(named pipe\), not a regular file/,
      );
    }
  });
});

describe("merge --out", () => {
  it("naming one of its inputs (or a link to one) is refused before anything is written", async () => {
    const dir = join(tmp, "merge");
    mkdirSync(dir);
    const a = join(dir, "a.json");
    const b = join(dir, "b.json");
    copyFileSync("schema/examples/closed-sweep.json", a);
    copyFileSync("schema/examples/closed-sweep.json", b);
    symlinkSync(a, join(dir, "link.json"));
    const before = readFileSync(a, "utf8");
    for (const out of [a, join(dir, "link.json")]) {
      const r = await runCli(["merge", a, b, "--out", out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/would overwrite .*a\.json, which is one of the inputs: choose another --out/);
    }
    expect(readFileSync(a, "utf8")).toBe(before);
    // a records file of an input is an input too: m.json would write m.requests.jsonl over it
    writeFileSync(join(dir, "m.requests.jsonl"), "");
    writeFileSync(
      join(dir, "c.json"),
      JSON.stringify({ ...JSON.parse(before), requests: null, requests_file: "m.requests.jsonl" }),
    );
    const r = await runCli(["merge", join(dir, "c.json"), b, "--out", join(dir, "m.json")]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/would overwrite .*m\.requests\.jsonl, which is one of the inputs/);
  });
});
