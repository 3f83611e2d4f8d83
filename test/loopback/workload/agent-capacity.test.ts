/**
 * Agent capacity under a tier (`--mode search --agent-sessions --agent-tier`) against mocks of a
 * stated capacity: sessions that never wait keep one call each in flight, so the most sessions a
 * mock of N slots serves without queueing (the tier's TTFT p95 is under one queued call's wait)
 * is N. With tool waits, a session holds a slot for one call's time of every call-and-wait, so
 * N slots serve N x cycle / hold sessions, less or more by the queueing the tier allows. A head
 * whose mock has a slot fewer shows the capacity row regressed, above the fold.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeNvidiaSmiPath } from "../../../scripts/fake-gpu.ts";
import { renderComment } from "../../../src/action/comment.ts";
import { readResults } from "../../../src/core/results/files.ts";
import type { RequestRecord } from "../../../src/schema/v1.ts";
import { documentPoints } from "../../../src/shared/measures.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";
import { pairVerdict } from "../../helpers/verdict.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-capacity-"));
const SESSIONS = join(dir, "sessions.jsonl");
/** 32 tokens at 4 ms: a call holds its slot about 130 ms; a queued call waits up to that long. */
const MOCK = { ttftMs: 5, itlMs: 4 };
const TIER = "fast:60:100";
const mocks: Record<number, MockProcess> = {};

beforeAll(async () => {
  const call = (k: number) => (k === 0 ? { user_tokens: 20 } : { tool_result_tokens: 20 });
  writeFileSync(
    SESSIONS,
    `${JSON.stringify({ id: "steady", system_tokens: 40, calls: [0, 1, 2, 3].map((k) => ({ ...call(k), output_tokens: 32 })) })}\n`,
  );
  for (const capacity of [3, 4]) mocks[capacity] = await startMock({ ...MOCK, capacity });
});
afterAll(async () => {
  for (const m of Object.values(mocks)) await m.close();
});

async function capacitySearch(capacity: number, gpu: string[] = [], env: Record<string, string> = {}) {
  const out = join(dir, `capacity-${capacity}.json`);
  const r = await runCli(
    [
      ...`sweep --mode search --agent-sessions ${SESSIONS} --agent-tier ${TIER} --levels 4 --duration 6 --warmup 4 --metrics-interval-ms 0 --calibrate-prompts false --out ${out}`.split(
        " ",
      ),
      "--base-url",
      mocks[capacity]!.url,
      ...gpu,
    ],
    { timeoutMs: 180_000, env },
  );
  expect(r.code, r.stderr).toBe(0);
  return { ...readResults(out), stdout: r.stdout };
}

describe("agent capacity under a tier", () => {
  it("is the mock's slots: the most sessions whose calls meet the tier; a slot fewer regresses the capacity row in the comment", async () => {
    // the base with a fake nvidia-smi of two GPUs (300 W and 150 W): per GPU and per kW
    const base = await capacitySearch(4, ["--gpu-sample-ms", "100"], {
      PATH: fakeNvidiaSmiPath(),
      FAKE_SMI_GPUS: "0:300,1:150",
    });
    const head = await capacitySearch(3);
    for (const [capacity, run] of [
      [4, base],
      [3, head],
    ] as const) {
      const agents = run.doc.saturation!.agents!;
      // within -10 % / +3 % of what the mock serves: one session per slot, never more
      const probes = run.doc.levels.map(
        (l) =>
          `${l.level}: ttft p95 ${l.ttft_ms.p95} decode p50 ${l.decode_tok_s.p50} ${l.validity?.status} ${l.validity?.reasons.map((r) => r.text).join("; ")} steady ${l.steady_state?.steady}`,
      );
      expect(agents.max_sessions, `mock of ${capacity} slots:\n${probes.join("\n")}`).toBe(capacity);
      expect(agents.bracket_sessions).toEqual([capacity, capacity + 1]);
      expect(agents.tier).toEqual({ name: "fast", ttft_p95_ms: 60, tok_s_per_user: 100 });
      expect(agents.ttft_p95_ms_at_max!).toBeLessThanOrEqual(60);
      expect(run.doc.config!.mode).toBe("closed");
      expect(run.stdout).toContain(`**Agent capacity:** ${capacity} concurrent sessions @ fast`);
    }
    const agents = base.doc.saturation!.agents!;
    expect(agents.per_gpu).toBe(4 / 2);
    expect(agents.per_kw! / (4 / 0.45)).toBeCloseTo(1, 3);
    for (const l of base.doc.levels) {
      const j = l.jobs!;
      expect(j.jobs_per_hour_per_gpu! / ((j.jobs_per_hour_per_user! * l.level) / 2)).toBeCloseTo(1, 9);
    }
    expect(head.doc.levels.every((l) => l.jobs!.jobs_per_hour_per_gpu === undefined)).toBe(true);
    expect(base.stdout).toMatch(/; 2\.00 per GPU, 8\.89 per kW\./);
    expect(base.stdout).toMatch(/\| jobs\/h per user \| jobs\/h per GPU \|/);
    const verdict = pairVerdict(documentPoints(head.doc), documentPoints(base.doc));
    const row = verdict.summary.rows.find((r) => r.measure === "agent_sessions")!;
    expect(row).toMatchObject({ benchmark: "agent capacity fast", verdict: "regressed" });
    const md = renderComment({ doc: head.doc, testbed: "tb", verdict, baseBranch: "main", links: {} });
    const visible = md.split("<details>")[0]!;
    expect(visible).toMatch(
      /\| agent capacity fast \| agent capacity \(sessions\) \| 4\.00 \| 3\.00 \| −25\.0 % \|/,
    );
  }, 240_000);

  it("with tool waits: between the sessions the mock's slots serve with no call waiting and with every call waiting the tier's slack", async () => {
    // 96 tokens at 4 ms: a call holds its slot HOLD = 5 + 95 x 4 + 4 = 389 ms (the mock refills a
    // freed slot one ITL later) and reads done at 385 ms; a tool runs WAIT = 1,025 ms after each.
    // A session then asks a slot for HOLD of every 385 + WAIT + L ms (L: the client's own delay
    // past each wait, measured), so 4 slots serve 4 x (385 + WAIT + L) / HOLD sessions (14.5 at
    // L = 0) with no call waiting, and a call may wait the tier's slack (its TTFT p95 less the
    // unqueued TTFT) on average at most before the tier fails: the capacity lies between.
    const slots = 4;
    const [ttftMs, itlMs, out, waitMs, tier] = [5, 4, 96, 1025, 50];
    const holdMs = ttftMs + (out - 1) * itlMs + itlMs;
    const readMs = ttftMs + (out - 1) * itlMs;
    const mock = await startMock({ ttftMs, itlMs, capacity: slots });
    // 16 sessions of 40 calls (no session ends within a probe), their first calls spread over
    // one cycle so a probe's sessions do not all ask at once (the mock's FIFO would then keep
    // them in lockstep groups, and a level's first calls are outside its steady window anyway)
    const cycle = readMs + waitMs;
    const file = join(dir, "waiting.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 16 }, (_, k) =>
        JSON.stringify({
          id: `w${k}`,
          calls: Array.from({ length: 40 }, (_, c) => ({
            ...(c === 0 ? { user_tokens: 20 } : { tool_result_tokens: 20 }),
            tool_wait_ms: c === 0 ? Math.round((k * cycle) / 16) : waitMs,
            output_tokens: out,
          })),
        }),
      ).join("\n"),
    );
    const outFile = join(dir, "waiting.json");
    try {
      const r = await runCli(
        [
          ...`sweep --mode search --agent-sessions ${file} --agent-tier slack:${tier}:100 --levels 4 --duration 12 --warmup 0 --metrics-interval-ms 0 --calibrate-prompts false --records file --out ${outFile}`.split(
            " ",
          ),
          "--base-url",
          mock.url,
        ],
        { timeoutMs: 240_000 },
      );
      expect(r.code, r.stderr).toBe(0);
    } finally {
      await mock.close();
    }
    const { doc, records } = readResults(outFile);
    // L: how much later than its wait each later call of a session went out, over every probe
    const bySession = new Map<number, RequestRecord[]>();
    for (const x of records) bySession.set(x.session!, [...(bySession.get(x.session!) ?? []), x]);
    const late: number[] = [];
    for (const calls of bySession.values()) {
      calls.sort((a, b) => a.turn! - b.turn!);
      for (let k = 1; k < calls.length; k++)
        if (calls[k - 1]!.end_ms !== null) late.push(calls[k]!.send_ms - calls[k - 1]!.end_ms! - waitMs);
    }
    const lateMs = late.reduce((a, b) => a + b, 0) / late.length;
    const unqueuedTtftMs = ttftMs;
    const noneWait = Math.floor((slots * (readMs + waitMs + lateMs)) / holdMs);
    const allWait = Math.floor((slots * (readMs + waitMs + lateMs + tier - unqueuedTtftMs)) / holdMs);
    const agents = doc.saturation!.agents!;
    const probes = doc.levels.map(
      (l) =>
        `${l.level}: ttft p95 ${l.ttft_ms.p95} ${l.validity?.status} ${l.validity?.reasons.map((x) => x.text).join("; ")} steady ${l.steady_state?.steady}`,
    );
    const why = `late ${lateMs.toFixed(1)} ms: between ${noneWait} and ${allWait}\n${probes.join("\n")}`;
    expect(agents.max_sessions, why).toBeGreaterThanOrEqual(0.9 * noneWait);
    expect(agents.max_sessions, why).toBeLessThanOrEqual(1.03 * allWait);
    // the waits were kept: no call went out before its tool was done
    expect(Math.min(...late)).toBeGreaterThanOrEqual(-0.5);
  }, 300_000);

  it("refuses a tier without a search of agent sessions, and a search of sessions without a tier or a duration", async () => {
    const bad = [
      [["--agent-tier", TIER], /--agent-tier goes with --mode search and --agent-sessions/],
      [
        ["--mode", "search", "--agent-sessions", SESSIONS, "--duration", "2"],
        /needs --agent-tier NAME:TTFT_P95_MS:TOK_S/,
      ],
      [
        ["--mode", "search", "--agent-sessions", SESSIONS, "--agent-tier", TIER],
        /--agent-tier needs --duration S/,
      ],
      [
        ["--mode", "search", "--agent-sessions", SESSIONS, "--agent-tier", "fast", "--duration", "2"],
        /--agent-tier must be NAME/,
      ],
    ] as const;
    for (const [args, why] of bad) {
      const r = await runCli(["sweep", "--base-url", "http://127.0.0.1:9", ...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(why);
    }
  });
});
