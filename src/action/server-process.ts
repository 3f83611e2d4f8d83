/** The inference server the Action may start (`server-command`) and stop in its post step. */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

export function startServer(command: string, logPath: string): number {
  mkdirSync(dirname(logPath), { recursive: true });
  const fd = openSync(logPath, "a");
  const child = spawn("bash", ["-c", command], {
    detached: true,
    stdio: ["ignore", fd, fd],
    env: process.env,
  });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start: ${command}`);
  return child.pid;
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
