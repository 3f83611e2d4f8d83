// GPU tools that lie or hang, through the CLI with a fake nvidia-smi first on PATH (and a DCGM
// exporter that blips): whatever the tool does, it can never keep tokenbench alive, stop the sweep
// or distort its figures. An nvidia-smi that ignores SIGTERM is killed after a grace period, also
// when tokenbench itself is stopped; an energy counter that jumps or freezes is set aside for the
// power reads; impossible reads, a clock an hour off, a flood of lines and a megabyte without a
// newline are bounded and named; a DCGM read that fails once is a gap; a price of thousands of
// dollars an hour is refused.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeNvidiaSmiPath } from "../../../scripts/fake-gpu.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { CLI, runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const tmp = mkdtempSync(join(tmpdir(), "tokenbench-hostile-gpu-"));
const PATH = fakeNvidiaSmiPath();
const ARGS = [
  "--levels",
  "1,2",
  "--requests",
  "24",
  "--max-tokens",
  "16",
  "--warmup",
  "0",
  "--gpu-sample-ms",
  "100",
];
let mock: MockProcess;
let n = 0;
beforeAll(async () => {
  mock = await startMock({ ttftMs: 30, itlMs: 5 });
}, 60_000);
afterAll(() => mock?.close());

async function sweep(env: Record<string, string>, extra: string[] = []) {
  const out = join(tmp, `run-${n++}.json`);
  const r = await runCli(["sweep", "--base-url", mock.url, ...ARGS, ...extra, "--out", out], {
    env: { PATH, FAKE_SMI_GPUS: "0:300", ...env },
    timeoutMs: 90_000,
  });
  const doc = existsSync(out)
    ? (parseResultDocument(JSON.parse(readFileSync(out, "utf8"))) as ResultDocument)
    : null;
  return { ...r, doc };
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** The sum over a run's levels of each level's energy over its window, as mean watts. */
const meanW = (doc: ResultDocument) => doc.levels.map((l) => l.gpu!.mean_power_w);

describe("a GPU tool that hangs", () => {
  it("an nvidia-smi that ignores SIGTERM: killed after the grace period; tokenbench exits, the results written", {
    timeout: 90_000,
  }, async () => {
    const pidfile = join(tmp, "smi.pid");
    const t0 = Date.now();
    const r = await sweep({ FAKE_SMI_IGNORE_TERM: "1", FAKE_SMI_PIDFILE: pidfile });
    expect(r.code, r.stderr).toBe(0);
    expect(r.doc!.levels.every((l) => l.gpu!.energy_j! > 0)).toBe(true);
    const pid = Number(readFileSync(pidfile, "utf8"));
    expect(alive(pid), `nvidia-smi (pid ${pid}) still running`).toBe(false);
    expect(Date.now() - t0).toBeLessThan(60_000);
  });

  it("and when tokenbench itself gets SIGTERM mid-sweep: it writes what it measured, kills the tool and exits", {
    timeout: 90_000,
  }, async () => {
    const { spawn } = await import("node:child_process");
    const pidfile = join(tmp, "smi-term.pid");
    const out = join(tmp, "term.json");
    const p = spawn(
      process.execPath,
      [CLI, "sweep", "--base-url", mock.url, ...ARGS, "--levels", "1,2,4", "--requests", "120", "--out", out],
      {
        env: {
          ...process.env,
          PATH,
          FAKE_SMI_GPUS: "0:300",
          FAKE_SMI_IGNORE_TERM: "1",
          FAKE_SMI_PIDFILE: pidfile,
        },
      },
    );
    let err = "";
    p.stderr.on("data", (d) => {
      err += d;
    });
    // once the first level has finished, stop it
    await new Promise<void>((res) => {
      const t = setInterval(() => {
        if (/level 2 \[2\/3\]/.test(err) || existsSync(out)) {
          clearInterval(t);
          res();
        }
      }, 50);
    });
    p.kill("SIGTERM");
    const code = await new Promise<number | null>((res) => p.on("close", (c) => res(c)));
    expect(code, err).toBe(130); // stopped by a signal, as the error list says
    const pid = Number(readFileSync(pidfile, "utf8"));
    expect(alive(pid), `nvidia-smi (pid ${pid}) still running`).toBe(false);
    expect(parseResultDocument(JSON.parse(readFileSync(out, "utf8"))).levels.length).toBeGreaterThanOrEqual(
      1,
    );
  });
});

describe("a GPU tool that lies", () => {
  it("an energy counter that leaps by 10^12 J: set aside for the power reads, said so; 300 W, not millions", {
    timeout: 90_000,
  }, async () => {
    const r = await sweep({ FAKE_SMI_COUNTER: "jump" });
    expect(r.code, r.stderr).toBe(0);
    for (const w of meanW(r.doc!)) {
      expect(w!).toBeGreaterThan(250);
      expect(w!).toBeLessThan(350);
    }
    expect(r.stderr).toMatch(
      /GPU 0's energy counter gave \d+ W over the window, its power reads 300 W: the counter was set aside/,
    );
    expect(r.doc!.levels.some((l) => l.gpu!.energy_method === "integrated")).toBe(true);
  });

  it("a frozen energy counter (0 W while every read says 300 W): the power reads, said so", {
    timeout: 90_000,
  }, async () => {
    const r = await sweep({ FAKE_SMI_COUNTER: "frozen" });
    expect(r.code, r.stderr).toBe(0);
    for (const w of meanW(r.doc!)) expect(w!).toBeGreaterThan(250);
    expect(r.stderr).toMatch(/energy counter gave 0 W over the window, its power reads 300 W/);
  });

  it("negative power reads: left out, said once; the energy from the counter", {
    timeout: 90_000,
  }, async () => {
    const r = await sweep({ FAKE_SMI_POWER: "-7" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.match(/reported an impossible power \(-7\): those reads were left out/g)).toHaveLength(1);
    for (const l of r.doc!.levels) {
      expect(l.gpu!.energy_method).toBe("counter");
      expect(l.gpu!.peak_power_w).toBeNull();
      expect(l.gpu!.mean_power_w!).toBeGreaterThan(250);
    }
  });

  it("timestamps an hour ahead: the reads placed when they arrived, said once; the figures as with a right clock", {
    timeout: 90_000,
  }, async () => {
    const r = await sweep({ FAKE_SMI_CLOCK_MS: String(3600_000) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.match(/timestamps were 3600 s off this machine's clock/g)).toHaveLength(1);
    for (const w of meanW(r.doc!)) {
      expect(w!).toBeGreaterThan(250);
      expect(w!).toBeLessThan(350);
    }
  });

  it("a flood of lines: read no further, the reason kept; the sweep unharmed", {
    timeout: 90_000,
  }, async () => {
    const r = await sweep({ FAKE_SMI_FLOOD: "2000" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.doc!.gpu_telemetry!.died!.reason).toMatch(
      /nvidia-smi flooded its output \(more than \d+ lines in a second/,
    );
    expect(r.doc!.levels.every((l) => l.ok === l.requests)).toBe(true);
  });

  it("a megabyte without a newline: dropped, said once; the reads after it kept", {
    timeout: 90_000,
  }, async () => {
    const r = await sweep({ FAKE_SMI_LONG: "1" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/nvidia-smi sent a line of more than 4096 bytes: it was dropped/);
    for (const w of meanW(r.doc!)) expect(w!).toBeGreaterThan(250);
  });

  it("an absurd price per GPU-hour: refused before anything opens", async () => {
    const r = await runCli(["sweep", "--base-url", mock.url, "--gpu-hour-cost", "1e9"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--gpu-hour-cost .*at most 1000/);
  });
});

describe("a DCGM exporter that blips", () => {
  let server: Server;
  let url = "";
  const t0 = Date.now();
  let calls = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      // every fifth read a 503, as an exporter behind a restarting proxy
      if (++calls % 5 === 0) return res.writeHead(503).end("unavailable");
      const mj = 1e9 + 200 * (Date.now() - t0);
      res.setHeader("content-type", "text/plain; version=0.0.4");
      res.end(
        [
          'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-dcgm-0",modelName="FAKE-DCGM"} 200.000000',
          `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-dcgm-0",modelName="FAKE-DCGM"} ${mj}`,
          "",
        ].join("\n"),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("a failed read is a gap, said once: the energy still known", { timeout: 90_000 }, async () => {
    const r = await sweep({ PATH: "/usr/bin:/bin" }, ["--gpu-metrics-url", url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.doc!.gpu_telemetry!.died).toBeNull();
    expect(r.stderr.match(/failed a read now and then \(HTTP 503\): those reads are gaps/g)).toHaveLength(1);
    for (const w of meanW(r.doc!)) {
      expect(w!).toBeGreaterThan(170);
      expect(w!).toBeLessThan(230);
    }
  });
});
