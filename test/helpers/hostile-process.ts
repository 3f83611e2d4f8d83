/** test/helpers/hostile-server.mjs in its own process: its root URL, and a way to stop it. */
import { spawn } from "node:child_process";
import { resolve } from "node:path";

const SERVER = resolve(import.meta.dirname, "hostile-server.mjs");

export async function startHostileServer(): Promise<{ root: string; stop(): void }> {
  const proc = spawn(process.execPath, [SERVER], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((res) =>
    proc.stdout!.once("data", (d) => res(JSON.parse(String(d)).port)),
  );
  return { root: `http://127.0.0.1:${port}`, stop: () => proc.kill("SIGTERM") };
}
