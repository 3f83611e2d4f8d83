// `npm run demo`: the README's first command. Everything on 127.0.0.1, nothing to configure:
// starts the mock server (TTFT 60 ms, ITL 12 ms, 16 slots) and runs the seed's demo sweep
// through the real CLI, writing results/demo/.
import { spawn } from "node:child_process";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const CLI = resolve(ROOT, "bin/tokenbench.js");

function startMock(): Promise<{ url: string; stop: () => void }> {
  return new Promise((res, rej) => {
    const p = spawn(
      process.execPath,
      [CLI, "mockserver", "--port", "0", "--ttft-ms", "60", "--itl-ms", "12", "--capacity", "16"],
      {
        stdio: ["ignore", "inherit", "pipe"],
      },
    );
    let err = "";
    p.stderr.on("data", (d: Buffer) => {
      err += d;
      const m = /listening on (http:\/\/\S+): /.exec(err);
      if (m) res({ url: m[1]!, stop: () => p.kill("SIGTERM") });
    });
    p.on("exit", (c) => rej(new Error(`mock server exited (${c}): ${err}`)));
  });
}

const mock = await startMock();
process.stderr.write(`demo: mock server at ${mock.url}\n`);
const code = await new Promise<number>((res) => {
  const p = spawn(
    process.execPath,
    [
      CLI,
      "sweep",
      "--base-url",
      mock.url,
      "--levels",
      "1,2,4,8,16,32,64",
      "--requests",
      "32",
      "--max-tokens",
      "32",
      "--slo-ttft-ms",
      "500",
      "--slo-tpot-ms",
      "20",
      "--out",
      "results/demo/mock-demo.json",
    ],
    { stdio: "inherit", cwd: ROOT },
  );
  p.on("exit", (c) => res(c ?? 1));
});
mock.stop();
process.exitCode = code;
