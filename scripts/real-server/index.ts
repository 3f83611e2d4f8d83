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

function run(cmd: string, args: string[], cwd: string): void {
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "ignore", "inherit"] });
}

/** The llama-server binary, built once per pinned version. */
export function ensureLlamaServer(): string {
  const dir = cacheDir();
  const bin = join(dir, "llama-server");
  if (existsSync(bin) && existsSync(join(dir, VOCAB))) return bin;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "tokenbench-llama-"));
  try {
    log(`fetching ${NODE_LLAMA_CPP} (npm pack) into ${work}`);
    run("npm", ["pack", NODE_LLAMA_CPP, "--silent"], work);
    const tgz = readdirSync(work).find((f) => f.endsWith(".tgz"));
    if (!tgz) throw new Error(`npm pack ${NODE_LLAMA_CPP} wrote no tarball`);
    run("tar", ["xzf", tgz], work);
    run("git", ["clone", "--quiet", "package/llama/gitRelease.bundle", "src"], work);
    const src = join(work, "src");
    const jobs = String(Math.max(1, Number(execFileSync("nproc").toString().trim()) || 1));
    log(`building llama-server CPU-only with ${jobs} jobs (about 15 minutes on 2 cores, once)`);
    run(
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
    );
    run("cmake", ["--build", "build", "--target", "llama-server", "-j", jobs], src);
    renameSync(join(src, "models", VOCAB), join(dir, VOCAB));
    renameSync(join(src, "build", "bin", "llama-server"), bin);
    log(`cached ${bin}`);
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
  log(): string;
  stop(): Promise<void>;
}

/** Start llama-server on 127.0.0.1 with one thread and `slots` parallel slots; resolves when healthy. */
export async function startRealServer(
  o: { port?: number; slots?: number; ctx?: number } = {},
): Promise<RealServer> {
  const bin = ensureLlamaServer();
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
  return {
    url,
    proc,
    log: () => out,
    stop: () =>
      new Promise<void>((done) => {
        if (proc.exitCode !== null) return done();
        proc.once("exit", () => done());
        proc.kill("SIGTERM");
      }),
  };
}
