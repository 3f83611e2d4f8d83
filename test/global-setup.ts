/**
 * The node project's global setup: every temporary folder the suite makes (its own, its child
 * processes', Chromium's profile) lands in one folder made for this run, and every process it
 * starts carries this run's id. At the end the folder is removed, and a process still alive after
 * a grace period is killed and named, failing the run: a suite leaves nothing behind, also when a
 * test failed half-way.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const RUN = `tokenbench-test-${process.pid}-${Date.now().toString(36)}`;

/**
 * Processes whose environment carries this run's id, but for vitest's own: this process and its
 * direct children (its esbuild service, its test forks, which end with it). What a test started
 * is a child of a fork, or an orphan once that fork is gone.
 */
function leftovers(): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, "latin1").includes(`TOKENBENCH_TEST_RUN=${RUN}`)) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ").trim();
      const [state, ppid] = (readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1] ?? "").split(" ");
      if (state === "Z" || Number(ppid) === process.pid) continue; // reaped soon, or vitest's own
      out.push({ pid, cmd });
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Folders of ours made since `sinceMs` in the machine's temporary folder, outside the run's. */
function strays(root: string, sinceMs: number): string[] {
  return readdirSync(root)
    .filter((f) => /^(tokenbench|tb)-/.test(f) && f !== RUN)
    .filter((f) => {
      try {
        return statSync(join(root, f)).birthtimeMs >= sinceMs;
      } catch {
        return false;
      }
    });
}

export default function setup(): () => Promise<void> {
  const root = tmpdir();
  const started = Date.now();
  const dir = join(root, RUN);
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
  process.env.TOKENBENCH_TEST_RUN = RUN;
  return async () => {
    rmSync(dir, { recursive: true, force: true });
    const problems: string[] = [];
    const outside = strays(root, started);
    if (outside.length > 0)
      problems.push(
        `it made temporary folders outside its own (${root}/${RUN}), left in ${root}: ${outside.join(", ")} (a process started without the run's TMPDIR)`,
      );
    if (process.platform !== "linux") {
      if (problems.length > 0) throw new Error(`the suite left things behind: ${problems.join("; ")}`);
      return;
    }
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
      problems.push(
        `${left.length} process(es) still running (killed now): ${left.map((p) => `${p.pid} ${p.cmd.slice(0, 120)}`).join("; ")}`,
      );
    if (problems.length > 0) throw new Error(`the suite left things behind: ${problems.join("; ")}`);
  };
}
