/**
 * The server's start, when tokenbench starts it (`--server-command`, the Action's server-command):
 * from the command's start to its first HTTP answer, to ready (the readiness check), and to the
 * first token of a one-token request; the phases the engine's own log states on the way, each
 * stamped when its line appeared in the log (polled every 50 ms, so to within that); and with
 * `--startup both`, a second, warm start: the server stopped and started again, its caches
 * (the OS's page cache of the weights, compiled kernels) now filled.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { ResultDocument } from "../../schema/v1.ts";
import { httpCall, oneTokenRequest } from "./http.ts";
import { waitReady } from "./readiness.ts";
import { startServer, stopServer } from "./server-process.ts";
import type { ResolvedTarget } from "./target.ts";

export type Startup = NonNullable<ResultDocument["startup"]>;
type StartFigures = Omit<Startup, "warm">;

/**
 * Lines engines print as they start, per phase: llama.cpp's llama-server (its load_model and
 * llama_server lines), vLLM's (model loader, KV cache sizing, gpu_model_runner's CUDA graph
 * capture, the API server's startup), SGLang's (model runner and server lines). The first line
 * that matches a phase stamps it; a phase an engine does not print is absent.
 */
export const LOG_PHASES: readonly { engine: string; phase: string; pattern: RegExp }[] = [
  { engine: "llama.cpp", phase: "loading model", pattern: /load_model: loading model/ },
  { engine: "llama.cpp", phase: "slots and KV cache sized", pattern: /load_model: initializing, n_slots/ },
  { engine: "llama.cpp", phase: "model loaded", pattern: /llama_server: model loaded|main: model loaded/ },
  { engine: "llama.cpp", phase: "listening", pattern: /llama_server: listening on|server is listening on/ },
  { engine: "vLLM", phase: "weights loaded", pattern: /Loading weights took|Model loading took/ },
  { engine: "vLLM", phase: "KV cache sized", pattern: /GPU KV cache size:/ },
  { engine: "vLLM", phase: "CUDA graphs captured", pattern: /Graph capturing finished in/ },
  { engine: "vLLM", phase: "engine initialized", pattern: /init engine .* took/ },
  { engine: "vLLM", phase: "API ready", pattern: /Application startup complete/ },
  { engine: "SGLang", phase: "weights loaded", pattern: /Load weight end/ },
  { engine: "SGLang", phase: "KV cache sized", pattern: /KV Cache is allocated/ },
  { engine: "SGLang", phase: "CUDA graphs captured", pattern: /Capture cuda graph end/ },
  { engine: "SGLang", phase: "API ready", pattern: /The server is fired up and ready to roll/ },
];

/** How often the log is read for phase lines, ms: a phase's time is known to within this. */
const POLL_MS = 50;

/** Watch a log from its current end: each phase's first line, stamped in seconds from `t0`. */
function watchPhases(logPath: string, t0: number): { stop(): Startup["phases"] } {
  let offset = 0;
  try {
    offset = statSync(logPath).size;
  } catch {}
  let carry = "";
  const seen: NonNullable<Startup["phases"]> = [];
  const read = () => {
    let fd: number;
    try {
      fd = openSync(logPath, "r");
    } catch {
      return;
    }
    try {
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, offset);
        if (n <= 0) break;
        offset += n;
        const lines = (carry + buf.subarray(0, n).toString("utf8")).split("\n");
        carry = lines.pop() ?? "";
        const at = (performance.now() - t0) / 1000;
        for (const line of lines)
          for (const p of LOG_PHASES)
            if (p.pattern.test(line) && !seen.some((s) => s.engine === p.engine && s.phase === p.phase))
              seen.push({ engine: p.engine, phase: p.phase, at_s: at, line: line.trim().slice(0, 200) });
      }
    } finally {
      closeSync(fd);
    }
  };
  // never what keeps the process alive (a start that failed leaves the watch unstopped)
  const timer = setInterval(read, POLL_MS).unref();
  return {
    stop() {
      clearInterval(timer);
      read();
      return seen;
    },
  };
}

/** The first token of a one-token request just after ready: seconds from the command's start. */
async function firstTokenS(target: ResolvedTarget, t0: number): Promise<number | null> {
  const r = await oneTokenRequest(target, target.model);
  return r.status === 200 ? (performance.now() - t0) / 1000 : null;
}

export interface StartedServerRun {
  pid: number;
  exited: () => string | null;
  /** When the command was started (performance.now()). */
  t0: number;
  stopWatching: () => Startup["phases"];
}

/** Start the command, its output appended to `logPath`, watching the log for phase lines. */
export function launch(command: string, logPath: string): StartedServerRun {
  const t0 = performance.now();
  const watch = watchPhases(logPath, t0);
  const s = startServer(command, logPath);
  return { pid: s.pid, exited: s.exited, t0, stopWatching: watch.stop };
}

/** The cold start's figures, once the preflight found the server ready. */
export async function coldFigures(
  run: StartedServerRun,
  target: ResolvedTarget,
  readiness: { answered_s?: number | null; waited_s: number },
): Promise<StartFigures> {
  const first = await firstTokenS(target, run.t0);
  return {
    answered_s: readiness.answered_s ?? null,
    ready_s: readiness.waited_s,
    first_token_s: first,
    phases: run.stopWatching(),
  };
}

/**
 * `--startup both`: stop the server, start it again, and measure that start as the cold one.
 * Returns the warm figures and the new process (the sweep runs against it).
 */
export async function warmRestart(
  command: string,
  logPath: string,
  previousPid: number,
  target: ResolvedTarget,
  readyTimeoutS: number,
  onStarted: (pid: number) => void,
): Promise<{ figures: StartFigures; run: StartedServerRun }> {
  await stopServer(previousPid);
  await portClosed(target);
  const run = launch(command, logPath);
  // said at once: a restart that never becomes ready is stopped by whoever started it
  onStarted(run.pid);
  const readiness = await waitReady(target, { timeoutS: readyTimeoutS, serverExited: run.exited });
  return { figures: await coldFigures(run, target, readiness), run };
}

/** Until the stopped server's port refuses connections (a restart must not find the old one), 10 s at most. */
async function portClosed(target: ResolvedTarget): Promise<void> {
  const until = performance.now() + 10_000;
  while (performance.now() < until) {
    const r = await httpCall(`${target.origin}/`, { method: "GET", timeoutMs: 500 });
    if (r.status === null) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}
