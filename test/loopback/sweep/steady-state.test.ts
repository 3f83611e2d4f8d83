// Figures from the steady state: a level too short to have one says so (table, JSON, notice),
// and a long level's window excludes its ramp (users joining) and its drain (users stopping),
// against the mock in its own process.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-steady-"));
const mocks: MockProcess[] = [];
afterAll(() => Promise.all(mocks.map((m) => m.close())));

async function sweep(name: string, mock: Parameters<typeof startMock>[0], args: string[]) {
  const m = await startMock(mock);
  mocks.push(m);
  const out = join(dir, `${name}.json`);
  const r = await runCli(
    [
      "sweep",
      "--base-url",
      m.url,
      "--warmup",
      "0",
      "--calibrate-prompts",
      "false",
      "--metrics-interval-ms",
      "0",
      "--records",
      "inline",
      ...args,
      "--out",
      out,
    ],
    { timeoutMs: 120_000 },
  );
  expect(r.code, r.stderr).toBe(0);
  const doc: ResultDocument = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
  return { ...r, doc };
}

describe("the steady-state window", () => {
  it("a 1 s level on a server with a 2 s TTFT: no steady state, in the table, the JSON and a notice", async () => {
    const { doc, stdout, stderr } = await sweep("short", { ttftMs: 2000, itlMs: 10 }, [
      "--levels",
      "4",
      "--duration",
      "1",
      "--max-tokens",
      "8",
    ]);
    const l = doc.levels[0]!;
    expect(l.steady_state!.steady).toBe(false);
    expect(l.steady_state!.reason).toMatch(/under two request lifetimes|under the/);
    // its figures are the whole level's: every successful request
    expect(l.ttft_ms.n).toBe(l.ok);
    expect(stdout).toMatch(/\| no \|/);
    expect(stdout).toMatch(/\*\*No steady state\*\* at any level/);
    expect(stderr).toMatch(/level 4: no steady state/);
  }, 60_000);

  it("a 20 s level is steady; its window starts when the level is full and ends when the first user stops", async () => {
    const { doc, stdout } = await sweep("long", { ttftMs: 100, itlMs: 10 }, [
      "--levels",
      "4",
      "--duration",
      "20",
      "--max-tokens",
      "16",
    ]);
    const l = doc.levels[0]!;
    const s = l.steady_state!;
    expect(s.steady, s.reason).toBe(true);
    const rs = doc.requests!.filter((r) => !r.warmup).sort((a, b) => a.send_ms - b.send_ms);
    // full: the 4th user's first send; the ramp is the three sent before it
    expect(s.window_start_ms).toBe(rs[3]!.send_ms);
    expect(s.before_window).toBe(3);
    // the first user to stop: the first end after the last send
    const lastSend = rs[rs.length - 1]!.send_ms;
    expect(s.window_end_ms).toBe(Math.min(...rs.map((r) => r.end_ms!).filter((t) => t > lastSend)));
    // the drain: requests running when it ended (3 users' last requests at least)
    expect(s.after_window).toBeGreaterThanOrEqual(3);
    expect(s.requests_inside + s.before_window + s.after_window).toBe(l.requests);
    // the headline latencies are the window's requests, counted apart from the rest
    expect(l.ttft_ms.n).toBe(s.requests_inside);
    expect(s.window_s).toBeGreaterThan(18);
    expect(stdout).toMatch(/\| \d+\.\d s \|/);
  }, 90_000);
});
