/**
 * The mock in its own process (the built library, dist/mock.js), so timing tests do not share
 * an event loop with the client they measure: on a busy machine an in-process server's timers
 * and the client's reads delay each other, and the test measures that instead.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import type { MockOptions, MockStats } from "../../src/mock/index.ts";

const ROOT = resolve(import.meta.dirname, "../..");

export interface MockProcess {
  url: string;
  port: number;
  stats(): Promise<MockStats>;
  close(): Promise<void>;
}

const CHILD = `
const { start } = await import(process.env.TB_MOCK_LIB);
const server = await start(JSON.parse(process.env.TB_MOCK_OPTIONS));
process.stdout.write(JSON.stringify({ url: server.url, port: server.port }) + "\\n");
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
`;

export function startMock(options: Partial<MockOptions> = {}): Promise<MockProcess> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
      env: {
        ...process.env,
        TB_MOCK_LIB: `file://${resolve(ROOT, "dist/mock.js")}`,
        TB_MOCK_OPTIONS: JSON.stringify({ port: 0, ...options }),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    proc.stderr.on("data", (d) => {
      err += d;
    });
    proc.stdout.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl === -1) return;
      const { url, port } = JSON.parse(out.slice(0, nl)) as { url: string; port: number };
      res({
        url,
        port,
        stats: async () => (await (await fetch(`${url}/mock/stats`)).json()) as MockStats,
        close: () =>
          new Promise<void>((done) => {
            if (proc.exitCode !== null) return done();
            proc.once("exit", () => done());
            proc.kill("SIGTERM");
          }),
      });
    });
    proc.once("exit", (code) => rej(new Error(`mock process exited ${code}: ${err}`)));
  });
}
