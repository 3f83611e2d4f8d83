import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CLI = resolve(ROOT, "bin/tokenbench.js");

export function runCli(
  args: string[],
  opts: { timeoutMs?: number; env?: Record<string, string>; nodeArgs?: string[]; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, [...(opts.nodeArgs ?? []), CLI, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => {
      stdout += d;
    });
    p.stderr.on("data", (d) => {
      stderr += d;
    });
    const t = setTimeout(() => {
      p.kill("SIGKILL");
      rej(new Error(`CLI timed out: ${args.join(" ")}\n${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    p.on("close", (code) => {
      clearTimeout(t);
      res({ code, stdout, stderr });
    });
  });
}

export function spawnCli(args: string[]): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
}
