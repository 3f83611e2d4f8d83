/**
 * The node project's global setup: every temporary folder the suite makes (its own, its child
 * processes', Chromium's profile) lands in one folder made for this run, and every process it
 * starts carries this run's id. At the end the folder is removed, and a process still alive after
 * a grace period is killed and named, failing the run: a suite leaves nothing behind, also when a
 * test failed half-way.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const RUN = `tokenbench-test-${process.pid}-${Date.now().toString(36)}`;

/** Processes other than this one whose environment carries this run's id. */
function leftovers(): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, "latin1").includes(`TOKENBENCH_TEST_RUN=${RUN}`)) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ").trim();
      if (readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1]?.startsWith("Z")) continue; // reaped soon
      out.push({ pid, cmd });
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

export default function setup(): () => Promise<void> {
  const dir = join(tmpdir(), RUN);
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
  process.env.TOKENBENCH_TEST_RUN = RUN;
  return async () => {
    rmSync(dir, { recursive: true, force: true });
    if (process.platform !== "linux") return;
    // a process stopped by its test's afterAll may need a moment to exit (workerd, Chromium)
    const deadline = Date.now() + 10_000;
    let left = leftovers();
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      left = leftovers();
    }
    for (const p of left) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    if (left.length > 0)
      throw new Error(
        `the suite left ${left.length} process(es) running (killed now): ${left.map((p) => `${p.pid} ${p.cmd.slice(0, 120)}`).join("; ")}`,
      );
  };
}
