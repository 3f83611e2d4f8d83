// Waits that cannot hang or spin: absurd spans and rates are usage errors naming the bound; a wait
// longer than one timer holds is chained; SIGTERM during any wait of a sweep (open loop, trace,
// think time, ramp-up, readiness, a search probe) exits 130 within 2 s, the finished levels
// written and nothing sent after the signal. The CLI and the mock run in their own processes.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TIMER_MS, sleepUntil } from "../../../src/core/load/loops.ts";
import { parseResultDocument } from "../../../src/schema/v1.ts";
import { runCli, spawnCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tokenbench-waits-"));
const QUIET = ["--warmup", "0", "--calibrate-prompts", "false", "--metrics-interval-ms", "0"];

let mock: MockProcess;
beforeAll(async () => {
  mock = await startMock({ ttftMs: 5, itlMs: 1 });
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

const sent = async () => (await mock.stats()).requests;

describe("a wait longer than one timer holds", () => {
  it("is chained: no TimeoutOverflowWarning, and a stop ends it at once", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    const stop = new AbortController();
    const t0 = performance.now();
    const slept = sleepUntil(performance.now() + 4 * MAX_TIMER_MS, stop.signal);
    setTimeout(() => stop.abort(), 30);
    await slept;
    await new Promise((r) => setImmediate(r));
    process.off("warning", onWarning);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(warnings).toEqual([]);
  });

  it("without a stop, a short wait still ends on time", async () => {
    const t0 = performance.now();
    await sleepUntil(t0 + 20);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(20);
  });
});

describe("absurd spans and rates are usage errors that name the bound, before anything is sent", () => {
  const refused = async (args: string[], pattern: RegExp) => {
    const before = await sent();
    const r = await runCli([
      "sweep",
      "--base-url",
      mock.url,
      ...QUIET,
      "--out",
      join(dir, "x.json"),
      ...args,
    ]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(pattern);
    expect(await sent()).toBe(before);
  };

  it("an open-loop rate of 1e-9 req/s", () =>
    refused(["--mode", "open", "--levels", "0.000000001", "--requests", "32"], /--max-duration-s 86400/));

  it("a --duration past --max-duration-s", () =>
    refused(["--duration", "100000"], /--duration is at most 86400 s per level \(--max-duration-s\)/));

  it("a trace whose gaps pass what a timer can hold", () => {
    const trace = join(dir, "long.jsonl");
    const rows = [0, 1, 2 ** 31 + 10].map((t) =>
      JSON.stringify({ timestamp: t, input_length: 16, output_length: 4 }),
    );
    writeFileSync(trace, `${rows.join("\n")}\n`);
    return refused(["--trace", trace], /spans 2\.15e\+6 s .* over --max-duration-s 86400/);
  });

  it("a slow search start rate", () =>
    refused(["--mode", "search", "--levels", "0.0001", "--slo-ttft-ms", "500"], /--max-duration-s/));
});

/** Start a sweep, wait until the mock has had `expect` requests, SIGTERM it during its wait. */
async function interrupted(
  args: string[],
  /** The requests the mock must have had, or a sign of its own that the wait has begun. */
  expectSent: number | (() => boolean),
  out = join(dir, `${Math.random()}.json`),
) {
  const base = await sent();
  const p = spawnCli(["sweep", ...QUIET, "--out", out, ...args]);
  let stderr = "";
  p.stderr!.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((res) => p.on("close", (c) => res(c)));
  const deadline = performance.now() + 30_000;
  const begun = async () =>
    typeof expectSent === "number" ? (await sent()) - base >= expectSent : expectSent();
  while (!(await begun()) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  // well inside the wait that follows
  await new Promise((r) => setTimeout(r, 300));
  const atSignal = (await sent()) - base;
  const t0 = performance.now();
  p.kill("SIGTERM");
  const code = await exited;
  const seconds = (performance.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 200));
  return { code, seconds, stderr, out, atSignal, after: (await sent()) - base };
}

describe("SIGTERM during a wait: exit 130 within 2 s, finished levels written, nothing sent after it", () => {
  it("open loop: between two arrivals of a slow level, after a finished one", async () => {
    const r = await interrupted(
      ["--base-url", mock.url, "--mode", "open", "--levels", "20,0.01", "--requests", "3"],
      4,
    );
    expect(r.code, r.stderr).toBe(130);
    expect(r.seconds).toBeLessThan(2);
    expect(r.atSignal).toBe(4);
    expect(r.after).toBe(r.atSignal);
    const doc = parseResultDocument(JSON.parse(readFileSync(r.out, "utf8")));
    expect(doc.levels.map((l) => l.level)).toEqual([20]);
    expect(doc.levels[0]!.ok).toBe(3);
    expect(doc.complete).toBe(false);
  });

  it("trace replay: before the trace's next request", async () => {
    const trace = join(dir, "gap.jsonl");
    const rows = [0, 10, 20, 600_000].map((t) =>
      JSON.stringify({ timestamp: t, input_length: 16, output_length: 4 }),
    );
    writeFileSync(trace, `${rows.join("\n")}\n`);
    const r = await interrupted(["--base-url", mock.url, "--trace", trace], 3);
    expect(r.code, r.stderr).toBe(130);
    expect(r.seconds).toBeLessThan(2);
    expect(r.after).toBe(3);
    expect(existsSync(r.out)).toBe(true);
    expect(parseResultDocument(JSON.parse(readFileSync(r.out, "utf8"))).levels).toEqual([]);
  });

  it("think time: between a conversation's turns", async () => {
    const r = await interrupted(
      [
        "--base-url",
        mock.url,
        "--turns",
        "2",
        "--think-time-ms",
        "600000",
        "--levels",
        "1",
        "--requests",
        "2",
      ],
      1,
    );
    expect(r.code, r.stderr).toBe(130);
    expect(r.seconds).toBeLessThan(2);
    expect(r.after).toBe(1);
  });

  it("ramp-up: before the ramp's next arrival", async () => {
    const r = await interrupted(
      [
        ...["--base-url", mock.url, "--mode", "open", "--levels", "0.01", "--requests", "2"],
        ...["--ramp-up-s", "3600"],
      ],
      1,
    );
    expect(r.code, r.stderr).toBe(130);
    expect(r.seconds).toBeLessThan(2);
    expect(r.after).toBe(1);
  });

  it("a search probe: between its arrivals", async () => {
    const r = await interrupted(
      [
        ...["--base-url", mock.url, "--mode", "search", "--levels", "0.02", "--requests", "2"],
        ...["--slo-ttft-ms", "500", "--arrival", "constant"],
      ],
      1,
    );
    expect(r.code, r.stderr).toBe(130);
    expect(r.seconds).toBeLessThan(2);
    expect(r.after).toBe(1);
  });

  it("readiness: a server that never answers", async () => {
    // it takes the connection and says nothing: the signal comes once the readiness wait has
    // begun (its first probe connected), not after a fixed time a busy machine's start-up outlasts
    const sockets: Socket[] = [];
    const silent = createServer((c) => sockets.push(c));
    const port = await new Promise<number>((res) =>
      silent.listen(0, "127.0.0.1", () => res((silent.address() as { port: number }).port)),
    );
    try {
      const r = await interrupted(
        ["--base-url", `http://127.0.0.1:${port}`, "--ready-timeout-s", "600"],
        () => sockets.length > 0,
      );
      expect(r.code, r.stderr).toBe(130);
      expect(r.seconds).toBeLessThan(2);
      expect(r.stderr).toMatch(/interrupted: nothing more is sent/);
    } finally {
      for (const c of sockets) c.destroy();
      silent.close();
    }
  });
});
