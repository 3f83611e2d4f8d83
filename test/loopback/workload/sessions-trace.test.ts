/**
 * Real workloads (#13), continued: multi-turn conversations (`--turns`, `--think-time-ms`) and
 * trace replay (`--trace`, `--trace-speed`). What was sent is checked at a recording server in
 * its own process (history growth, think time, send times vs the trace, shared blocks); what
 * was measured against the mock, whose prefix cache makes the expected cached tokens exact.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readResults } from "../../../src/core/results/files.ts";
import { parseTrace, TRACE_BLOCK_TOKENS } from "../../../src/core/workload/trace.ts";
import type { RequestRecord } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { startHostileServer } from "../../helpers/hostile-process.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const TRACE = resolve(import.meta.dirname, "../../../examples/trace.jsonl");
const dir = mkdtempSync(join(tmpdir(), "tb-sessions-"));
let server: Awaited<ReturnType<typeof startHostileServer>>;
let mock: MockProcess;

interface Sent {
  messages: { role: string; content: string }[];
  max_tokens: number;
  _arrived_ms: number;
  /** The client's request id header: "<client tag>-<request id>". */
  _request_id: string;
}

beforeAll(async () => {
  server = await startHostileServer();
  mock = await startMock({ ttftMs: 5, itlMs: 1, serverTimestamps: true });
});
afterAll(async () => {
  server?.stop();
  await mock?.close();
});

const recorded = async (): Promise<Sent[]> => (await fetch(`${server.root}/recorded/`)).json();

async function sweep(name: string, baseUrl: string, args: string[], expectCode = 0) {
  const out = join(dir, `${name}.json`);
  const r = await runCli([
    "sweep",
    "--base-url",
    baseUrl,
    "--warmup",
    "0",
    "--metrics-interval-ms",
    "0",
    "--calibrate-prompts",
    "false",
    "--records",
    "file",
    "--out",
    out,
    ...args,
  ]);
  expect(r.code, r.stderr).toBe(expectCode);
  return { ...(expectCode === 0 ? readResults(out) : { doc: null, records: [] }), r, out };
}

const bySession = (records: RequestRecord[]) => {
  const m = new Map<number, RequestRecord[]>();
  for (const r of records.filter((x) => !x.warmup))
    m.set(
      r.session!,
      [...(m.get(r.session!) ?? []), r].sort((a, b) => a.turn! - b.turn!),
    );
  return m;
};

describe("--turns: multi-turn conversations", () => {
  it("each turn re-sends the history (earlier turns and the server's answers) plus a new user turn; think time between turns", async () => {
    const before = (await recorded()).length;
    const { doc, records } = await sweep("turns-record", `${server.root}/record`, [
      "--model",
      "hostile",
      "--levels",
      "2",
      "--requests",
      "6",
      "--turns",
      "3",
      "--think-time-ms",
      "80",
      "--prompt-tokens",
      "12",
    ]);
    const sent = (await recorded()).slice(before);
    expect(sent).toHaveLength(6);
    // turn t carries 2t - 1 messages; the two users share the 6 requests (a user whose third
    // turn is done starts a new conversation)
    for (const b of sent) expect([1, 3, 5]).toContain(b.messages.length);
    expect(sent.filter((b) => b.messages.length === 1).length).toBeGreaterThanOrEqual(2);
    for (const body of sent.filter((b) => b.messages.length > 1)) {
      const history = body.messages.slice(0, -1);
      // the earlier turn was sent exactly as this history's prefix, and the server's answer follows it
      const earlier = sent.find((b) => JSON.stringify(b.messages) === JSON.stringify(history.slice(0, -1)));
      expect(earlier, JSON.stringify(history)).toBeDefined();
      expect(history[history.length - 1]).toEqual({ role: "assistant", content: "abc" });
      expect(body.messages[body.messages.length - 1]!.role).toBe("user");
      expect(body._arrived_ms - earlier!._arrived_ms).toBeGreaterThanOrEqual(80);
    }
    // the records: session and turn, and the think time between a turn's end and the next send
    const sessions = bySession(records);
    expect(sessions.size).toBeGreaterThanOrEqual(2);
    expect([...sessions.values()].some((t) => t.length === 3)).toBe(true);
    for (const turns of sessions.values()) {
      expect(turns.map((r) => r.turn)).toEqual([1, 2, 3].slice(0, turns.length));
      for (let k = 1; k < turns.length; k++)
        expect(turns[k]!.send_ms - turns[k - 1]!.end_ms!).toBeGreaterThanOrEqual(79);
    }
    expect(doc!.config!.sessions).toEqual({ turns: 3, think_time_ms: 80 });
    const turns = doc!.levels[0]!.turns!;
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3]);
    expect(turns.reduce((a, t) => a + t.ok, 0)).toBe(6);
    expect(turns.map((t) => t.ok)).toEqual(
      [1, 2, 3].map((k) => records.filter((r) => !r.warmup && r.turn === k).length),
    );
  });

  it("against the mock: history growth and the cached tokens per turn are exactly what its prefix cache implies", async () => {
    const { doc, records, out } = await sweep("turns-mock", mock.url, [
      "--levels",
      "2",
      "--requests",
      "8",
      "--turns",
      "4",
      "--prompt-tokens",
      "40",
      "--max-tokens",
      "20",
    ]);
    const block = 16;
    for (const turns of bySession(records).values()) {
      let history = 0;
      for (const r of turns) {
        // the prompt is the history (earlier prompts and answers) plus a new 40-token turn
        expect(r.usage!.prompt_tokens).toBe(history + 40);
        // every full 16-token block of the history was cached when the previous turn finished
        expect(r.usage!.cached_tokens).toBe(Math.floor(history / block) * block);
        history += 40 + r.usage!.completion_tokens!;
      }
    }
    const turns = doc!.levels[0]!.turns!;
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4]);
    expect(turns[0]!.cached_tokens_pct).toBe(0);
    for (let k = 1; k < turns.length; k++)
      expect(turns[k]!.cached_tokens_pct!).toBeGreaterThan(turns[k - 1]!.cached_tokens_pct!);
    expect(turns[3]!.prompt_tokens.p50).toBe(3 * 60 + 40);
    const md = readFileSync(out.replace(/\.json$/, ".md"), "utf8");
    expect(md).toContain("**Conversations** (4 turns, 0 ms think time): TTFT per turn");
    expect(md).toMatch(/\| 2 \| 4 \| \d+ \| [\d.]+ \| [\d.]+ \| 220 \| \d+% \|/);
  });

  it("usage errors: --turns outside closed loop, --think-time-ms without --turns", async () => {
    const a = await sweep("turns-open", mock.url, ["--mode", "open", "--levels", "1", "--turns", "2"], 2);
    expect(a.r.stderr).toContain("--turns needs --mode closed");
    const b = await sweep("think-alone", mock.url, ["--think-time-ms", "10"], 2);
    expect(b.r.stderr).toContain("--think-time-ms goes with --turns");
  });

  it("jobs: each conversation is one job (first send to last answer, waits included), the same from the records; a server slower per call regresses the job rows", async () => {
    const run = (name: string, url: string) =>
      sweep(name, url, [
        "--levels",
        "2",
        "--requests",
        "48",
        "--turns",
        "3",
        "--think-time-ms",
        "50",
        "--max-tokens",
        "8",
        "--client-late-floor-ms",
        "60",
      ]);
    const { doc, records, out } = await run("jobs", mock.url);
    const level = doc!.levels[0]!;
    const jobs = level.jobs!;
    const sessions = [...bySession(records).values()];
    const complete = sessions.filter((t) => t.length === 3 && t.every((r) => r.error === null));
    expect(jobs.turns).toBe(3);
    expect([jobs.complete, jobs.incomplete]).toEqual([complete.length, sessions.length - complete.length]);
    expect(jobs.complete).toBeGreaterThanOrEqual(2);
    // the job time from the records themselves: turn 1's send to turn 3's end
    const spans = complete.map((t) => (t[2]!.end_ms! - t[0]!.send_ms) / 1000).sort((a, b) => a - b);
    expect(jobs.e2e_s.n).toBe(complete.length);
    expect(jobs.e2e_s.max!).toBeCloseTo(spans.at(-1)!, 9);
    expect(jobs.e2e_s.min!).toBeCloseTo(spans[0]!, 9);
    // two waits of at least 50 ms each (a timer never fires early) in every job
    for (const t of complete) {
      const wait = t[2]!.end_ms! - t[0]!.send_ms - t.reduce((a, r) => a + (r.end_ms! - r.send_ms), 0);
      expect(wait).toBeGreaterThanOrEqual(2 * 50 - 1);
    }
    expect(jobs.wait_share!).toBeGreaterThan(0.099 / jobs.e2e_s.max!);
    expect(jobs.wait_share!).toBeLessThan(1);
    expect([jobs.calls_per_job, jobs.output_tokens_per_job]).toEqual([3, 24]);
    expect(jobs.jobs_per_hour_per_user!).toBeCloseTo((3600 * jobs.complete) / (level.wall_time_s * 2), 9);
    expect(jobs.cached_tokens_pct!).toBeGreaterThan(0); // later turns find the conversation cached
    const report = await runCli(["report", out, "--out-dir", join(dir, "jobs-plots")]);
    expect(report.stdout).toMatch(/\*\*Jobs\*\* .*\n\n\| level \| jobs \| cut short \| job p50 \(s\)/);
    // the same workload against a server 25 ms slower to the first token and 4 ms per token:
    // about 160 ms more per job of three calls
    const slower = await startMock({ ttftMs: 30, itlMs: 5 });
    const slow = await run("jobs-slow", slower.url).finally(() => slower.close());
    const cmp = await runCli(["compare", out, slow.out, "--format", "json"]);
    expect(cmp.code, cmp.stderr).toBe(0);
    const rows = JSON.parse(cmp.stdout).rows as { benchmark: string; measure: string; verdict: string }[];
    const row = (m: string) => rows.find((x) => x.benchmark === "closed c=2" && x.measure === m)!;
    expect(row("job_e2e_p50_s").verdict, JSON.stringify(row("job_e2e_p50_s"))).toBe("regressed");
    expect(row("jobs_per_hour_per_user").verdict).toBe("regressed");
  }, 120_000);
});

describe("--trace: replaying a Mooncake trace", () => {
  const trace = parseTrace(readFileSync(TRACE, "utf8"), "trace.jsonl");

  it("sends every request at the trace's times (scaled by --trace-speed), in its order, with its lengths and shared blocks", async () => {
    const before = (await recorded()).length;
    const { doc, records } = await sweep("trace-record", `${server.root}/record`, [
      "--model",
      "hostile",
      "--trace",
      TRACE,
      "--trace-speed",
      "4",
    ]);
    // in request-id order (close arrivals may reach the server in either order)
    const idOf = (b: Sent) => Number(b._request_id.split("-")[1]);
    // a request sent again (its kept-alive connection found closed: "-r1" after its id) arrived
    // twice; the last one is the one answered, and its time the one the record keeps
    const answered = new Map((await recorded()).slice(before).map((b) => [idOf(b), b]));
    const sent = [...answered.values()].sort((a, b) => idOf(a) - idOf(b));
    const rows = trace.rows;
    expect(sent).toHaveLength(rows.length);
    const t0 = rows[0]!.timestampMs;
    const offsets = rows.map((r) => (r.timestampMs - t0) / 4);
    // in the trace's order, each prompt as long as input_length (a word a token uncalibrated), output as output_length
    sent.forEach((body, i) => {
      expect(body.messages[0]!.content.split(" ").length).toBe(rows[i]!.inputTokens);
      expect(body.max_tokens).toBe(rows[i]!.outputTokens);
      expect(idOf(body)).toBe(idOf(sent[0]!) + i);
    });
    // requests listing the same hash id share that 512-token block's text
    const blockText = (i: number, b: number) =>
      sent[i]!.messages[0]!.content.split(" ")
        .slice(b * TRACE_BLOCK_TOKENS, (b + 1) * TRACE_BLOCK_TOKENS)
        .join(" ");
    let compared = 0;
    for (let i = 0; i < rows.length; i++)
      for (let j = i + 1; j < rows.length; j++) {
        const a = rows[i]!.hashIds;
        const b = rows[j]!.hashIds;
        for (let k = 0; k < Math.min(a.length, b.length); k++) {
          const full = (k + 1) * TRACE_BLOCK_TOKENS <= Math.min(rows[i]!.inputTokens, rows[j]!.inputTokens);
          if (!full) continue;
          compared++;
          if (a[k] === b[k]) expect(blockText(i, k)).toBe(blockText(j, k));
          else expect(blockText(i, k)).not.toBe(blockText(j, k));
        }
      }
    expect(compared).toBeGreaterThan(50);
    // the document: the trace, its mean rate as the level, replay lag from intended vs actual sends
    expect(doc!.config!.trace).toEqual({ name: "trace.jsonl", lines: 40, sha256: trace.sha256, speed: 4 });
    const span = (offsets[offsets.length - 1]! - offsets[0]!) / 1000;
    expect(doc!.levels[0]!.level).toBeCloseTo((rows.length - 1) / span, 1);
    const measured = records.filter((r) => !r.warmup).sort((a, b) => a.id - b.id);
    // the schedule is the trace's to the microsecond, and each request went out when it was due,
    // as late as the client's own timers were (its self-check, which samples every 10 ms: a shorter
    // stall between two samples goes unseen, so the latest send may pass the bound itself on a
    // busy machine; test/helpers/lateness.ts), not a fixed number of ms
    const client = doc!.levels[0]!.client;
    const late = (client.lateness_bound_ms ?? 1) + (client.send_queue_ms?.max ?? 0) + 1;
    measured.forEach((r, i) => {
      expect(r.intended_send_ms! - measured[0]!.intended_send_ms!).toBeCloseTo(offsets[i]!, 6);
      expect(r.send_ms - r.intended_send_ms!).toBeGreaterThanOrEqual(-0.5);
      expect(r.prompt_tokens_requested).toBe(rows[i]!.inputTokens);
    });
    const lags = measured.map((r) => r.send_ms - r.intended_send_ms!).sort((a, b) => a - b);
    expect(lags[Math.floor(lags.length / 2)]!, "the median send's lag").toBeLessThanOrEqual(late);
    expect(lags[lags.length - 1]!, "the latest send's lag").toBeLessThanOrEqual(2 * late);
    expect(doc!.levels[0]!.open_loop!.schedule_lag_ms.n).toBe(rows.length);
  });

  it("against the mock: blocks shared with earlier requests show as cached tokens", async () => {
    const { doc, records, out } = await sweep("trace-mock", mock.url, [
      "--trace",
      TRACE,
      "--trace-speed",
      "4",
    ]);
    const rows = trace.rows;
    const measured = records.filter((r) => !r.warmup).sort((a, b) => a.id - b.id);
    let expectedHits = 0;
    measured.forEach((r, i) => {
      expect(r.error).toBeNull();
      expect(r.usage!.prompt_tokens).toBe(rows[i]!.inputTokens);
      // the longest run of leading full blocks some earlier request had too, among those the
      // mock admitted first (it caches a prompt on admission; two sends a millisecond apart can
      // reach it in either order on a busy machine: its own arrival stamps say which came first)
      let shared = 0;
      for (let j = 0; j < i; j++) {
        if (measured[j]!.server_arrival_ms! >= r.server_arrival_ms!) continue;
        let k = 0;
        while (
          k < rows[i]!.hashIds.length &&
          k < rows[j]!.hashIds.length &&
          rows[i]!.hashIds[k] === rows[j]!.hashIds[k] &&
          (k + 1) * TRACE_BLOCK_TOKENS <= Math.min(rows[i]!.inputTokens, rows[j]!.inputTokens)
        )
          k++;
        shared = Math.max(shared, k);
      }
      if (shared > 0) expectedHits++;
      expect(r.usage!.cached_tokens!, `request ${i}`).toBeGreaterThanOrEqual(shared * TRACE_BLOCK_TOKENS);
    });
    expect(expectedHits).toBeGreaterThan(10);
    expect(doc!.levels[0]!.cached_tokens_pct!).toBeGreaterThan(30);
    expect(readFileSync(out.replace(/\.json$/, ".md"), "utf8")).toMatch(
      /\*\*Trace replay:\*\* trace\.jsonl at 4x, 40 requests; replay lag \(actual − scheduled send\) p50 [\d.]+ ms, p99 [\d.]+ ms/,
    );
  });

  it("--requests takes the first N; bad lines and flag mixes are named before any request", async () => {
    const first = await sweep("trace-first", mock.url, [
      "--trace",
      TRACE,
      "--trace-speed",
      "8",
      "--requests",
      "5",
    ]);
    expect(first.doc!.levels[0]!.requests).toBe(5);
    const bad = join(dir, "bad-trace.jsonl");
    writeFileSync(
      bad,
      '{"timestamp": 0, "input_length": 10, "output_length": 4}\n{"timestamp": 5, "input_length": 0}\n',
    );
    const a = await sweep("trace-bad", mock.url, ["--trace", bad], 1);
    expect(a.r.stderr).toContain(
      '[trace_invalid]: bad-trace.jsonl: line 2: "input_length" must be a positive integer',
    );
    const b = await sweep("trace-levels", mock.url, ["--trace", TRACE, "--levels", "3"], 2);
    expect(b.r.stderr).toContain("--trace sets the rate from the trace's own times: drop --levels");
    const c = await sweep("trace-speed-alone", mock.url, ["--trace-speed", "2"], 2);
    expect(c.r.stderr).toContain("--trace-speed goes with --trace FILE");
    // rows that share one timestamp have no rate: refused, with the closed-loop level that sends them at once
    const burst = join(dir, "burst-trace.jsonl");
    writeFileSync(burst, '{"timestamp": 7, "input_length": 10, "output_length": 4}\n'.repeat(6));
    const d = await sweep("trace-burst", mock.url, ["--trace", burst], 2);
    expect(d.r.stderr).toContain(
      "--trace burst-trace.jsonl: its 6 replayed rows share one timestamp, so there is no rate to replay",
    );
    expect(d.r.stderr).toContain("(--levels 6)");
  });
});

describe("a run's prompts are its own", () => {
  it("a second identical run finds none of the first run's unique prompts or group prefixes in the server's cache", async () => {
    const args = ["--levels", "1", "--requests", "4", "--prompt-tokens", "64", "--max-tokens", "4"];
    const prefixed = [...args, "--shared-prefix-tokens", "128", "--prefix-groups", "2"];
    for (const [name, flags] of [
      ["unique", args],
      ["prefixed", prefixed],
    ] as const) {
      const first = await sweep(`${name}-1`, mock.url, [...flags]);
      const second = await sweep(`${name}-2`, mock.url, [...flags]);
      for (const run of [first, second]) {
        const rs = run.records.filter((r) => !r.warmup).sort((a, b) => a.id - b.id);
        // the first request of each group (or every request without groups) is a miss in every run
        const firsts = name === "unique" ? rs : rs.slice(0, 2);
        for (const r of firsts) expect(r.usage!.cached_tokens, `${name}: request ${r.id}`).toBe(0);
      }
    }
  });
});

describe("--cancel-share: streams the client aborts", () => {
  const cancelRun = async (name: string, o: Parameters<typeof startMock>[0], share = "0.25") => {
    const m = await startMock(o);
    try {
      return await sweep(name, m.url, [
        "--levels",
        "1,2",
        "--requests",
        "16",
        "--max-tokens",
        "16",
        "--cancel-share",
        share,
        "--cancel-after-tokens",
        "4",
        "--records",
        "inline",
      ]);
    } finally {
      await m.close();
    }
  };

  it("each aborted after 4 tokens, kept apart from every figure; a healthy server frees them at once", async () => {
    const { doc, records } = await cancelRun("cancel-healthy", { ttftMs: 5, itlMs: 3, capacity: 32 });
    const cut = records.filter((r) => r.error?.code === "cancelled");
    expect(cut.length).toBeGreaterThan(0);
    // aborted at the read that brought the fourth token (events of one read come together)
    for (const r of cut) {
      expect(r.event_times_ms.length).toBeGreaterThanOrEqual(4);
      expect(r.event_times_ms.length).toBeLessThan(16);
    }
    expect(doc!.config!.cancel).toEqual({ share: 0.25, after_tokens: 4 });
    for (const l of doc!.levels) {
      const mine = cut.filter((r) => r.level === l.level && !r.warmup).length;
      expect(l.cancelled).toMatchObject({
        requests: mine,
        after_tokens: 4,
        release: { source: "metrics", busy: 0 },
      });
      // in no figure: not a request, not an error
      expect(l.ok + l.errors).toBe(l.requests);
      expect(l.errors_by_code).not.toHaveProperty("cancelled");
      expect(l.validity!.reasons.map((x) => x.code)).not.toContain("leak");
      // an idle request's TTFT before the level and after it: within the probe's own noise
      const p = l.cancelled!.probe!;
      expect(p.before_ms).toBeGreaterThan(0);
      expect(p.after_ms! - p.before_ms!).toBeLessThanOrEqual(p.bound_ms!);
    }
  });

  it("a server that frees them in its account but decodes on (the mock's zombie fault): leak, by the probe", async () => {
    // Each zombie adds half the base TTFT to every later prefill: 8 of them at 60 ms, +240 ms, far
    // beyond the probe's bound even where a busy machine makes the client read 100 ms late.
    const { doc } = await cancelRun(
      "cancel-zombie",
      { ttftMs: 60, itlMs: 3, capacity: 32, faults: [{ kind: "zombie", rate: 1, every: null }] },
      "0.5",
    );
    const l = doc!.levels[0]!;
    // its /metrics says nothing is busy
    expect(l.cancelled!.release).toMatchObject({ source: "metrics", busy: 0 });
    const p = l.cancelled!.probe!;
    const zombies = l.cancelled!.requests;
    expect(zombies).toBeGreaterThan(0);
    expect(p.after_ms! - p.before_ms!).toBeGreaterThan(p.bound_ms!);
    expect(l.validity!.status).toBe("invalid");
    expect(l.validity!.reasons).toContainEqual(
      expect.objectContaining({
        code: "leak",
        text: expect.stringMatching(
          /^leak: an idle request's time to first token was [\d.]+ ms after the level, [\d.]+ ms before it .*though it says nothing is busy/,
        ),
      }),
    );
  }, 60_000);

  it("a server that keeps what the client let go (the mock's leak fault): leak, with how many are still busy", async () => {
    const { doc } = await cancelRun("cancel-leak", {
      ttftMs: 5,
      itlMs: 3,
      capacity: 32,
      faults: [{ kind: "leak", rate: 1, every: null }],
    });
    const l = doc!.levels[0]!;
    expect(l.cancelled!.requests).toBeGreaterThan(0);
    expect(l.cancelled!.release).toMatchObject({
      source: "metrics",
      freed_s: null,
      busy: l.cancelled!.requests,
    });
    expect(l.validity!.status).toBe("invalid");
    expect(l.validity!.reasons).toContainEqual(
      expect.objectContaining({
        code: "leak",
        text: expect.stringMatching(
          /^leak: \d+ requests still busy 5 s after the level \(\d+ of its streams were cancelled/,
        ),
      }),
    );
  }, 60_000);
});
