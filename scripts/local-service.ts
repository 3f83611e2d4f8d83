// The local results service (demo and loopback tests): `wrangler dev` with its own local D1 (migrations
// applied with `wrangler d1 migrations apply --local`), on a free port of 127.0.0.1.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = resolve(ROOT, "node_modules/.bin/wrangler");
const ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" };

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
    s.on("error", rej);
  });
}

export interface LocalService {
  url: string;
  adminToken: string;
  persistDir: string;
  proc: ChildProcess;
  /** The last `chars` of what wrangler dev printed (its request lines among them). */
  log(chars?: number): string;
  stop(): Promise<void>;
  apiToken(repo: string): Promise<string>;
}

export async function startService(
  vars: Record<string, string> = {},
  persistDir?: string,
): Promise<LocalService> {
  const dir = persistDir ?? mkdtempSync(join(tmpdir(), "tokenbench-d1-"));
  const mig = spawnSync(
    WRANGLER,
    ["d1", "migrations", "apply", "tokenbench", "--local", "--persist-to", dir],
    {
      cwd: ROOT,
      env: ENV,
      encoding: "utf8",
    },
  );
  if (mig.status !== 0) throw new Error(`migrations failed: ${mig.stderr}\n${mig.stdout}`);
  // wrangler dev's inspector takes 9229 unless told: another wrangler dev (an editor's, a second
  // demo) holding it would stop this one from starting
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const adminToken = `admin-${Math.random().toString(36).slice(2)}`;
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    dir,
    "--var",
    `ADMIN_TOKEN:${adminToken}`,
  ];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const proc = spawn(WRANGLER, args, {
    cwd: ROOT,
    env: ENV,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  const started = new Promise<void>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`wrangler dev did not start:\n${log}`)), 60_000);
    const on = (d: Buffer) => {
      log += d.toString();
      if (log.includes("Ready on")) {
        clearTimeout(t);
        res();
      }
    };
    proc.stdout!.on("data", on);
    proc.stderr!.on("data", on);
    proc.on("exit", (c) => {
      clearTimeout(t);
      rej(new Error(`wrangler dev exited ${c}:\n${log}`));
    });
  });
  try {
    await started;
  } catch (err) {
    // nothing of a service that never started is left behind: its process, its local D1
    try {
      process.kill(-proc.pid!, "SIGKILL");
    } catch {}
    if (persistDir === undefined) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    adminToken,
    persistDir: dir,
    proc,
    log: (chars = 4000) => log.slice(-chars),
    async stop() {
      if (proc.exitCode !== null) return;
      await new Promise<void>((r) => {
        proc.once("exit", () => r());
        try {
          process.kill(-proc.pid!, "SIGTERM");
        } catch {
          proc.kill("SIGTERM");
        }
        setTimeout(() => {
          try {
            process.kill(-proc.pid!, "SIGKILL");
          } catch {}
        }, 5000).unref();
      });
    },
    async apiToken(repo: string) {
      const r = await fetch(`${url}/api/v1/admin/tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ repository: repo }),
      });
      if (r.status !== 201) throw new Error(`token creation failed: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { token: string }).token;
    },
  };
}
