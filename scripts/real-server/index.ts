/**
 * A real inference server for tests and trials: llama.cpp's `llama-server`, built CPU-only from
 * the llama.cpp sources that ship inside the npm package node-llama-cpp (pinned; fetched with
 * `npm pack`, never installed), running a tiny random-weight model written by tiny-model.ts.
 * The binary and the model are cached outside the clone, keyed by version, so only the first
 * build costs time (about 15 minutes on 2 cores).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { TINY, writeTinyModel } from "./tiny-model.ts";

export const NODE_LLAMA_CPP = "node-llama-cpp@3.21.1";
export const VOCAB = "ggml-vocab-llama-spm.gguf";
export const MODEL_ALIAS = "tokenbench-tiny";

export const cacheDir = (): string =>
  join(
    process.env.TOKENBENCH_CACHE ??
      join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "tokenbench"),
    NODE_LLAMA_CPP.replace("@", "-"),
  );

const log = (m: string) => process.stderr.write(`real-server: ${m}\n`);

// Offline, npm's update check and git's hints are advice that cannot be followed: off.
const QUIET_ENV = {
  ...process.env,
  NPM_CONFIG_UPDATE_NOTIFIER: "false",
  NPM_CONFIG_FUND: "false",
  GIT_ADVICE: "0",
};

/** cmake's progress (`[ 42%] Building ...`) as a percentage, or null for other lines. */
export function buildPercent(line: string): number | null {
  const m = /^\[\s*(\d{1,3})%\]/.exec(line);
  return m ? Number(m[1]) : null;
}

const elapsed = (t0: number) => {
  const s = Math.round((performance.now() - t0) / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
};

/**
 * One build step, its output kept off the terminal but its progress on it: cmake's percentage
 * each time it passes another 10 %, and a line every 60 s in any case, with the elapsed time.
 */
function run(step: string, cmd: string, args: string[], cwd: string, t0: number): Promise<void> {
  log(`${step} (${elapsed(t0)} so far)`);
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: QUIET_ENV, stdio: ["ignore", "pipe", "pipe"] });
    let shown = -10;
    let err = "";
    let rest = "";
    const beat = setInterval(() => log(`${step}: still working (${elapsed(t0)})`), 60_000);
    p.stdout.on("data", (d: Buffer) => {
      const lines = (rest + d.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        const pct = buildPercent(line);
        if (pct !== null && pct >= shown + 10) {
          shown = pct - (pct % 10);
          log(`${step}: ${pct} % (${elapsed(t0)})`);
        }
      }
    });
    p.stderr.on("data", (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    p.on("error", reject);
    p.on("close", (code) => {
      clearInterval(beat);
      if (code === 0) resolve();
      else
        reject(
          new Error(`${step}: ${cmd} exited with ${code}:\n${err.trim().split("\n").slice(-20).join("\n")}`),
        );
    });
  });
}

/** The llama-server binary, built once per pinned version. */
export async function ensureLlamaServer(): Promise<string> {
  const dir = cacheDir();
  const bin = join(dir, "llama-server");
  if (existsSync(bin) && existsSync(join(dir, VOCAB))) return bin;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "tokenbench-llama-"));
  const t0 = performance.now();
  try {
    await run(
      `[1/5] fetching ${NODE_LLAMA_CPP}'s llama.cpp sources (npm pack)`,
      "npm",
      ["pack", NODE_LLAMA_CPP, "--silent"],
      work,
      t0,
    );
    const tgz = readdirSync(work).find((f) => f.endsWith(".tgz"));
    if (!tgz) throw new Error(`npm pack ${NODE_LLAMA_CPP} wrote no tarball`);
    await run("[2/5] unpacking", "tar", ["xzf", tgz], work, t0);
    await run(
      "[3/5] checking out the sources",
      "git",
      ["-c", "advice.detachedHead=false", "clone", "--quiet", "package/llama/gitRelease.bundle", "src"],
      work,
      t0,
    );
    const src = join(work, "src");
    const jobs = String(Math.max(1, Number(execFileSync("nproc").toString().trim()) || 1));
    await run(
      "[4/5] configuring (cmake, CPU only)",
      "cmake",
      [
        "-S",
        ".",
        "-B",
        "build",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DBUILD_SHARED_LIBS=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_SERVER=ON",
        "-DLLAMA_BUILD_TOOLS=ON",
        "-DLLAMA_BUILD_APP=OFF",
        "-DLLAMA_BUILD_UI=OFF",
        "-DLLAMA_USE_PREBUILT_UI=OFF",
        "-DLLAMA_OPENSSL=OFF",
        "-DLLAMA_CURL=OFF",
        "-DGGML_NATIVE=OFF",
      ],
      src,
      t0,
    );
    await run(
      `[5/5] compiling llama-server with ${jobs} jobs (about 15 minutes on 2 cores, once)`,
      "cmake",
      ["--build", "build", "--target", "llama-server", "-j", jobs],
      src,
      t0,
    );
    renameSync(join(src, "models", VOCAB), join(dir, VOCAB));
    renameSync(join(src, "build", "bin", "llama-server"), bin);
    log(`cached ${bin} (built in ${elapsed(t0)})`);
    return bin;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The tiny random-weight model, written once per configuration. */
export function ensureModel(): string {
  const dir = cacheDir();
  const key = createHash("sha256")
    .update(JSON.stringify({ TINY, VOCAB, v: 2 }))
    .digest("hex")
    .slice(0, 12);
  const path = join(dir, `tiny-${key}.gguf`);
  if (!existsSync(path)) {
    const tmp = `${path}.tmp-${process.pid}`;
    const bytes = writeTinyModel(join(dir, VOCAB), tmp);
    renameSync(tmp, path);
    log(`wrote ${path} (${(bytes / 1e6).toFixed(1)} MB)`);
  }
  return path;
}

export interface RealServer {
  url: string;
  proc: ChildProcess;
  /** The slots and context per slot the server reports (its /props), and the threads it was given. */
  slots: number | null;
  ctxPerSlot: number | null;
  threads: number;
  log(): string;
  stop(): Promise<void>;
}

/** Start llama-server on 127.0.0.1 with one thread and `slots` parallel slots; resolves when healthy. */
export async function startRealServer(
  o: { port?: number; slots?: number; ctx?: number; extraArgs?: string[] } = {},
): Promise<RealServer> {
  const bin = await ensureLlamaServer();
  const model = ensureModel();
  const slots = o.slots ?? 4;
  const port = o.port ?? 0;
  const args = [
    "-m",
    model,
    "--alias",
    MODEL_ALIAS,
    "-t",
    "1",
    "-tb",
    "1",
    "--host",
    "127.0.0.1",
    "--port",
    String(port === 0 ? 18000 + Math.floor(Math.random() * 2000) : port),
    "-np",
    String(slots),
    "-c",
    String((o.ctx ?? 2048) * slots),
    "--metrics",
    "--no-webui",
    ...(o.extraArgs ?? []),
  ];
  const proc = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = `http://127.0.0.1:${args[args.indexOf("--port") + 1]}`;
  const t0 = Date.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`llama-server exited ${proc.exitCode}:\n${out.slice(-2000)}`);
    try {
      const r = await fetch(`${url}/health`);
      if (r.status === 200) break;
    } catch {}
    if (Date.now() - t0 > 60_000)
      throw new Error(`llama-server not healthy after 60 s:\n${out.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // What it serves, as the server itself says (its /props), not as it was asked.
  const props = (await fetch(`${url}/props`)
    .then((r) => r.json())
    .catch(() => null)) as { total_slots?: number; default_generation_settings?: { n_ctx?: number } } | null;
  return {
    url,
    proc,
    slots: props?.total_slots ?? null,
    ctxPerSlot: props?.default_generation_settings?.n_ctx ?? null,
    threads: Number(args[args.indexOf("-t") + 1]),
    log: () => out,
    stop: () =>
      new Promise<void>((done) => {
        if (proc.exitCode !== null) return done();
        proc.once("exit", () => done());
        proc.kill("SIGTERM");
      }),
  };
}
