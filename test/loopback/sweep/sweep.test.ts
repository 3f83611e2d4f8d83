import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSweepConfig } from "../../../src/core/sweep/config.ts";
import { runSweep } from "../../../src/core/sweep/sweep.ts";
import { parseFault } from "../../../src/mock/index.ts";
import { parseResultDocument, type SweepConfig } from "../../../src/schema/v1.ts";
import { runCli, spawnCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";
import { contact, withoutContact } from "../../helpers/target.ts";

const tmp = mkdtempSync(join(tmpdir(), "tokenbench-sweep-"));

function config(over: Partial<SweepConfig> = {}): SweepConfig {
  return defaultSweepConfig({
    levels: [1],
    requests_per_level: 8,
    warmup_requests: 0,
    prompt_tokens: 16,
    max_tokens: 8,
    timeout_s: 10,
    metrics_interval_ms: null,
    ...over,
  });
}

const conn = async (url: string) => ({
  pre: await contact(url),
  records: "inline" as const,
  resume: false,
});

describe("sweeps against the mock", () => {
  let mock: MockProcess;
  beforeAll(async () => {
    mock = await startMock({ ttftMs: 30, itlMs: 4, capacity: 2 });
  });
  afterAll(() => mock.close());

  it("queueing is visible when concurrency exceeds the server's slots", async () => {
    const doc = await runSweep({
      ...(await conn(mock.url)),
      config: config({ levels: [2, 6], requests_per_level: 12 }),
      out: null,
    });
    const [l2, l6] = doc.levels;
    expect(l2!.errors).toBe(0);
    expect(l6!.errors).toBe(0);
    // 6 users on 2 slots: two thirds of requests wait one or two whole requests (30 + 7 x 4 =
    // 58 ms each by the mock's schedule), so the median TTFT rises by at least half of one, less
    // what level 2's own late reads added to it (a busy machine's: they only raise a TTFT)
    const late = (l: typeof l2) => l!.client.lateness_bound_ms ?? 1;
    expect(l6!.ttft_ms.p50! - l2!.ttft_ms.p50!).toBeGreaterThan(29 - late(l2));
    expect(l6!.output_tok_s).toBeLessThan(l2!.output_tok_s * 1.3);
    expect(l6!.peak_in_flight).toBe(6);
    // decode is not slowed by the queue (the slots cap the running requests): each request's mean
    // gap, not the median single gap, which a busy machine's bursts of reads can make near zero;
    // a last token read late lengthens a request's 7 gaps by that lateness over 7
    expect(l6!.tpot_ms.p50!).toBeLessThan(l2!.tpot_ms.p50! * 1.5 + (2 * late(l6)) / 7);
  });

  it("closed loop raises requests to 2x the users, with a notice", async () => {
    const notices: string[] = [];
    const doc = await runSweep({
      ...(await conn(mock.url)),
      config: config({ levels: [5], requests_per_level: 4 }),
      out: null,
      onNotice: (m) => notices.push(m),
    });
    expect(doc.levels[0]!.requests).toBe(10);
    expect(doc.levels[0]!.notices.join(" ")).toMatch(/raised --requests from 4 to 10/);
    expect(notices.some((n) => n.includes("raised"))).toBe(true);
  });

  it("open loop: achieved rate near target, lag small, queue-inclusive latency reported", async () => {
    const m = await startMock({ ttftMs: 5, itlMs: 1, capacity: 100 });
    const doc = await runSweep({
      ...(await conn(m.url)),
      config: config({
        mode: "open",
        levels: [40],
        requests_per_level: 60,
        arrival: "constant",
        max_tokens: 4,
      }),
      out: null,
    });
    await m.close();
    const l = doc.levels[0]!;
    expect(l.open_loop).not.toBeNull();
    expect(l.open_loop!.target_rate_rps).toBe(40);
    // 60 arrivals 25 ms apart: the rate is 40 req/s, give or take the first and last sends' lateness
    // over the 1.5 s span; each send is as late as the client's loop was (its self-check says how)
    const late = l.client.lateness_bound_ms ?? 1;
    expect(Math.abs(l.open_loop!.achieved_rate_rps! - 40) / 40).toBeLessThan(0.02 + (2 * late) / 1475);
    expect(l.open_loop!.schedule_lag_ms.p50!).toBeLessThanOrEqual(
      (l.client.event_loop_delay_ms.p99 ?? 0) + 1,
    );
    expect(l.open_loop!.ttft_from_intended_ms.n).toBe(60);
    expect(l.concurrency).toBeNull();
  });

  it("faults are recorded by code and the sweep goes on", async () => {
    const m = await startMock({
      ttftMs: 2,
      itlMs: 1,
      faults: [parseFault("http500@3"), parseFault("reset@5")],
    });
    const out = join(tmp, "faults.json");
    const doc = await runSweep({
      ...(await conn(m.url)),
      config: config({ levels: [1, 2], requests_per_level: 15 }),
      out,
    });
    await m.close();
    const l1 = doc.levels[0]!;
    expect(l1.errors_by_code.http_error).toBe(5);
    expect(l1.errors_by_code.connection_reset).toBeGreaterThan(0);
    expect(l1.ok + l1.errors).toBe(15);
    expect(doc.levels).toHaveLength(2);
    const saved = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(saved.complete).toBe(true);
    expect(saved.requests!.filter((r) => r.error?.code === "http_error")).toHaveLength(10);
    expect(readFileSync(join(tmp, "faults.csv"), "utf8").split("\n")[0]).toContain("ttft_ms_p50");
    expect(readFileSync(join(tmp, "faults.md"), "utf8")).toContain("| level | req | err |");
  });

  it("an unreachable server: every request errors, levels are still written", async () => {
    const m = await startMock({});
    const url = m.url;
    await m.close();
    const out = join(tmp, "down.json");
    const doc = await runSweep({
      pre: await withoutContact(url),
      records: "inline",
      resume: false,
      config: config({ levels: [1, 2], requests_per_level: 2 }),
      out,
    });
    expect(doc.levels.map((l) => l.errors_by_code)).toEqual([{ connect_failed: 2 }, { connect_failed: 4 }]);
    expect(existsSync(out)).toBe(true);
  });

  it("per-request records can go to a sibling JSON Lines file", async () => {
    const out = join(tmp, "sib.json");
    await runSweep({
      ...(await conn(mock.url)),
      config: config({ requests_per_level: 3 }),
      out,
      records: "file",
    });
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(doc.requests).toBeNull();
    expect(doc.requests_file).toBe("sib.requests.jsonl");
    expect(readFileSync(join(tmp, "sib.requests.jsonl"), "utf8").trim().split("\n")).toHaveLength(3);
  });
});

describe("the CLI", () => {
  it("invalid flags: a clear message and exit code 2", async () => {
    for (const args of [
      ["sweep", "--levels", "1,x"],
      ["sweep", "--mode", "sideways"],
      ["sweep", "--bogus"],
      ["sweep", "--extra-body", "{nope"],
      ["sweep", "--base-url", "ftp://x"],
      ["mockserver", "--fault", "explode:1"],
      ["nosuchcommand"],
    ]) {
      const r = await runCli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(10);
    }
  });

  it("sweep writes JSON, CSV and Markdown and prints the table", async () => {
    const m = await startMock({ ttftMs: 5, itlMs: 1 });
    const out = join(tmp, "cli.json");
    const r = await runCli([
      "sweep",
      "--base-url",
      m.url,
      "--levels",
      "1,2",
      "--requests",
      "4",
      "--max-tokens",
      "4",
      "--out",
      out,
      "--quiet",
    ]);
    await m.close();
    expect(r.code).toBe(0);
    // what was measured first (target, model, workload, date, version), then the table
    expect(r.stdout).toMatch(
      /^# tokenbench sweep: mock-model\n\nhttp:\/\/127\.0\.0\.1:\d+ \(chat API\); closed loop at concurrency /,
    );
    expect(r.stdout).toMatch(/Measured \d{4}-\d\d-\d\dT[\d:.]+Z by tokenbench \d+\.\d+\.\d+/);
    const lines = r.stdout.trim().split("\n");
    const at = lines.findIndex((l) => l.startsWith("| level | req | err | out tok/s"));
    expect(at).toBeGreaterThan(0);
    // the table (head, separator, two levels), then, for levels this short, the note that they
    // had no steady state (their figures are the whole level's)
    expect(lines.slice(at, at + 4).every((l) => l.startsWith("|"))).toBe(true);
    const after = lines.slice(at + 4).filter((l) => l !== "");
    // then the server's own mean phases from its /metrics histograms (the mock's are vLLM's): a row per level
    const means = after.findIndex((l) => l.startsWith("**The server's means**"));
    expect(means).toBeGreaterThanOrEqual(0);
    expect(after.slice(means + 1).map((l) => l.slice(0, 4))).toEqual(["| le", "|---", "| 1 ", "| 2 "]);
    expect(after.slice(0, means)).toEqual(
      means > 0 ? [expect.stringMatching(/^\*\*No steady state\*\*/)] : [],
    );
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(doc.target.model).toBe("mock-model"); // discovered from /v1/models
    expect(existsSync(join(tmp, "cli.csv"))).toBe(true);
  });

  it("--resume after a kill finishes the sweep without redoing finished levels", async () => {
    const m = await startMock({ ttftMs: 20, itlMs: 20, capacity: 8 });
    const out = join(tmp, "resume.json");
    const args = [
      "sweep",
      "--base-url",
      m.url,
      "--levels",
      "1,2,3",
      "--requests",
      "6",
      "--max-tokens",
      "10",
      "--warmup",
      "0",
      "--out",
      out,
      "--quiet",
    ];
    const child = spawnCli(args);
    // Wait for the first checkpoint (level 1 done), then kill hard mid-level-2.
    const t0 = Date.now();
    while (Date.now() - t0 < 30_000) {
      if (existsSync(out)) {
        const d = JSON.parse(readFileSync(out, "utf8"));
        if (d.levels.length >= 1) break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill("SIGKILL");
    await new Promise((r) => child.on("close", r));
    const partial = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(partial.complete).toBe(false);
    expect(partial.levels.length).toBeGreaterThanOrEqual(1);
    expect(partial.levels.length).toBeLessThan(3);
    const firstLevel = partial.levels[0]!;

    // Without --quiet: notices (here "resuming") are printed; --quiet prints only errors.
    const r = await runCli([...args.slice(0, -1), "--resume"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/resuming/);
    const done = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(done.complete).toBe(true);
    expect(done.levels.map((l) => l.level)).toEqual([1, 2, 3]);
    expect(done.levels[0]).toEqual(firstLevel); // not redone
    const ids = done.requests!.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(done.requests!.filter((x) => x.level === 1)).toHaveLength(6);

    const mismatch = await runCli([...args.slice(0, -1), "--max-tokens", "11", "--resume"]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain("resume_mismatch");
    await m.close();
  });
});
