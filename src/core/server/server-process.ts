/** The inference server tokenbench may start (`--server-command`, the Action's server-command) and stop. */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

export interface StartedServer {
  pid: number;
  /** Why the server is gone (exit code or signal), or null while it runs. */
  exited(): string | null;
}

export function startServer(command: string, logPath: string): StartedServer {
  mkdirSync(dirname(logPath), { recursive: true });
  const fd = openSync(logPath, "a");
  const child = spawn("bash", ["-c", command], {
    detached: true,
    stdio: ["ignore", fd, fd],
    env: process.env,
  });
  closeSync(fd);
  let gone: string | null = null;
  // Exit code 0 is a command that hands the server on (`docker run -d`, `... &`): keep waiting.
  child.on("exit", (code, signal) => {
    if (signal !== null) gone = `the server command was ended by ${signal} before the server was ready`;
    else if (code !== 0)
      gone = `the server command exited with code ${code} before the server was ready (see the log below)`;
  });
  child.on("error", (err) => {
    gone = `the server command could not be started: ${err.message}`;
  });
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start: ${command}`);
  return { pid: child.pid, exited: () => gone };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** SIGTERM the server's process group, then SIGKILL after `graceMs`. */
export async function stopServer(pid: number, graceMs = 10_000): Promise<"stopped" | "killed" | "gone"> {
  if (!alive(pid)) return "gone";
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    process.kill(pid, "SIGTERM");
  }
  const t0 = Date.now();
  while (Date.now() - t0 < graceMs) {
    if (!alive(pid)) return "stopped";
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    process.kill(pid, "SIGKILL");
  }
  return "killed";
}

export function logTail(path: string, lines = 40): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}
