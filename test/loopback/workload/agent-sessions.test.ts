/**
 * `--agent-sessions`: what an agent's session sends, checked at a recording server in its own
 * process (each call re-sends the context verbatim: the earlier call's messages, the server's
 * answer, then the new input; subagents' answers joined into the parent's next input; a
 * compaction keeps only the system prompt), and what it measures against the mock, whose
 * prefix cache makes each call's prompt and cached tokens exact; the tools' waits are kept.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readResults } from "../../../src/core/results/files.ts";
import { type AgentSession, parseAgentSessions } from "../../../src/core/workload/agent-sessions.ts";
import { TAG_WORDS } from "../../../src/core/workload/prompts.ts";
import type { RequestRecord } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { startHostileServer } from "../../helpers/hostile-process.ts";
import { allowanceMs } from "../../helpers/lateness.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const EXAMPLE = resolve(import.meta.dirname, "../../../examples/agent-sessions.jsonl");
const WEKA = resolve(import.meta.dirname, "../../fixtures/weka-trace.json");
const SESSIONS = parseAgentSessions(readFileSync(EXAMPLE, "utf8"), "agent-sessions.jsonl").sessions;
const dir = mkdtempSync(join(tmpdir(), "tb-agents-"));
let server: Awaited<ReturnType<typeof startHostileServer>>;
let mock: MockProcess;

beforeAll(async () => {
  server = await startHostileServer();
  mock = await startMock({ ttftMs: 5, itlMs: 1, serverTimestamps: true });
});
afterAll(async () => {
  server?.stop();
  await mock?.close();
});

async function sweep(name: string, baseUrl: string, args: string[], file = EXAMPLE) {
  const out = join(dir, `${name}.json`);
  const r = await runCli([
    "sweep",
    "--base-url",
    baseUrl,
    "--agent-sessions",
    file,
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
  expect(r.code, r.stderr).toBe(0);
  return readResults(out);
}

/** The jobs of a level: their calls in the order sent. */
const jobsOf = (records: RequestRecord[]) => {
  const m = new Map<number, RequestRecord[]>();
  for (const r of records.filter((x) => !x.warmup)) m.set(r.session!, [...(m.get(r.session!) ?? []), r]);
  return [...m.values()].map((rs) => rs.sort((a, b) => a.turn! - b.turn!));
};

/**
 * What the mock counts for each call of a session (one word a token, a 16-token cache block):
 * the context re-sent (the unique tag and the system prompt, the inputs, the answers) and the
 * part of it its prefix cache holds from the context's previous call.
 */
function expected(s: AgentSession): { calls: [number, number][]; answer: number } {
  const block = 16;
  const system = TAG_WORDS + s.system.tokens;
  const calls: [number, number][] = [];
  let context = system;
  let cached = 0;
  let joined = 0;
  let answer = 0;
  for (const st of s.steps) {
    if (st.kind === "subagents") {
      const subs = st.agents.map(expected);
      for (const x of subs) calls.push(...x.calls);
      joined = subs.reduce((a, x) => a + x.answer, 0);
      continue;
    }
    if (st.compactTokens !== null) {
      cached = system;
      context = system + st.compactTokens;
    }
    const prompt = context + joined + (st.add?.tokens ?? 0);
    calls.push([prompt, Math.floor(cached / block) * block]);
    answer = st.outputTokens;
    context = prompt + answer;
    cached = context;
    joined = 0;
  }
  return { calls, answer };
}

describe("--agent-sessions: an agent's session as it is sent", () => {
  it("each call re-sends the context verbatim, subagents' answers are joined into the parent's next input, a compaction keeps the system prompt", async () => {
    const before = ((await (await fetch(`${server.root}/recorded/`)).json()) as unknown[]).length;
    const { records } = await sweep("record", `${server.root}/record`, [
      "--model",
      "hostile",
      "--levels",
      "2",
      "--requests",
      "24",
    ]);
    type Sent = { messages: { role: string; content: string }[]; _request_id: string };
    const sent = ((await (await fetch(`${server.root}/recorded/`)).json()) as Sent[]).slice(before);
    // "<client>-<id>", "-r<n>" after it on a resend (a kept-alive connection found closed): the last is answered
    const byId = new Map(sent.map((b) => [Number(b._request_id.split("-")[1]), b]));
    let joins = 0;
    let compactions = 0;
    for (const job of jobsOf(records)) {
      const bodies = job.map((r) => byId.get(r.id)!);
      expect(bodies.every((b) => b !== undefined)).toBe(true);
      // every context opens with its own system prompt, whose unique tag no other job's shares
      for (const b of bodies) expect(b.messages[0]!.role).toBe("system");
      for (const [k, b] of bodies.entries()) {
        if (k === 0) continue;
        const history = b.messages.slice(0, -1);
        const newInput = b.messages[b.messages.length - 1]!;
        expect(newInput.role).toBe("user");
        if (history.length === 1) {
          // a subagent's first call, or a compaction: the system prompt then one input; a
          // compaction's context sent more before (an earlier call of the same system prompt)
          const same = (o: Sent) => o.messages[0]!.content === b.messages[0]!.content;
          if (bodies.slice(0, k).some((o) => same(o) && o.messages.length > 2)) compactions++;
          continue;
        }
        // the earlier call of this context, sent exactly as this history's prefix, then its answer
        const earlier = bodies.find(
          (o) => JSON.stringify(o.messages) === JSON.stringify(history.slice(0, -1)),
        );
        expect(earlier, JSON.stringify(history).slice(0, 300)).toBeDefined();
        expect(history[history.length - 1]).toEqual({ role: "assistant", content: "abc" });
        if (newInput.content.startsWith("abc\n\nabc\n\n")) joins++;
      }
    }
    expect(joins).toBeGreaterThanOrEqual(1);
    expect(compactions).toBeGreaterThanOrEqual(1);
  });

  it("against the mock: every call's prompt and cached tokens are what the context implies, the tools' waits are kept, jobs are counted", async () => {
    const { doc, records } = await sweep("mock", mock.url, ["--levels", "2", "--duration", "4"]);
    const level = doc.levels[0]!;
    const allowance = allowanceMs(level.client);
    const jobs = jobsOf(records);
    let complete = 0;
    const excess: number[] = [];
    const shares: number[] = [];
    for (const job of jobs) {
      const session = SESSIONS.find((s) => expected(s).calls.length === job[0]!.job_calls)!;
      expect(session, `job of ${job[0]!.job_calls} calls`).toBeDefined();
      if (job.length !== job[0]!.job_calls || job.some((r) => r.error !== null)) continue;
      complete++;
      const got = job.map((r) => [r.usage!.prompt_tokens!, r.usage!.cached_tokens!] as [number, number]);
      const want = expected(session).calls;
      expect([...got].sort(), session.id).toEqual([...want].sort());
      const sum = (k: 0 | 1) => want.reduce((a, c) => a + c[k], 0);
      shares.push((100 * sum(1)) / sum(0));
      if (session.id === "long-edit") {
        // one context: each call waits its tool's time after the previous call's end
        const waits = session.steps.map((s) => (s.kind === "call" ? s.waitMs : 0));
        for (let k = 1; k < job.length; k++) {
          const gap = job[k]!.send_ms - job[k - 1]!.end_ms!;
          expect(gap).toBeGreaterThanOrEqual(waits[k]! - 0.5);
          excess.push(gap - waits[k]!);
        }
      }
    }
    expect(complete).toBeGreaterThanOrEqual(2);
    expect(excess.length).toBeGreaterThan(0);
    excess.sort((a, b) => a - b);
    expect(excess[Math.floor(excess.length / 2)]!).toBeLessThanOrEqual(allowance + 1);
    const j = level.jobs!;
    expect(j.complete).toBe(complete);
    expect(j.complete + j.incomplete).toBe(jobs.length);
    expect(j.turns).toBe(Math.max(...jobs.filter((x) => x.length === x[0]!.job_calls).map((x) => x.length)));
    expect(j.wait_share!).toBeGreaterThan(0);
    expect(j.cached_tokens_pct!).toBeGreaterThan(0);
    // each job's own share, from what its context implies
    expect(j.cached_pct_per_job!.n).toBe(complete);
    expect(j.cached_pct_per_job!.min!).toBeCloseTo(Math.min(...shares), 9);
    expect(j.cached_pct_per_job!.max!).toBeCloseTo(Math.max(...shares), 9);
    expect(doc.config!.agent_sessions).toMatchObject({ format: "tokenbench", sessions: 2, calls: 12 });
    // the CSV carries the job figures, a column each
    const [head, row] = readFileSync(join(dir, "mock.csv"), "utf8").trim().split("\n") as [string, string];
    // quoted cells (a notice with commas in it) are one cell
    const cells = [...row.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].map((m) => m[1]!);
    const cell = (name: string) => cells[head.split(",").indexOf(name)];
    expect(cell("jobs_complete")).toBe(String(j.complete));
    expect(Number(cell("jobs_per_hour_per_user"))).toBeCloseTo(j.jobs_per_hour_per_user!, 6);
    expect(Number(cell("job_wait_share"))).toBeCloseTo(j.wait_share!, 9);
    expect(Number(cell("job_cached_pct_min"))).toBeCloseTo(Math.min(...shares), 9);
  });

  it("--tool-wait exp:60: each later call of a context waits its seeded draw (recorded), the same on a rerun", async () => {
    const run = async (name: string) =>
      (
        await sweep(name, mock.url, [
          "--levels",
          "1",
          "--requests",
          "12",
          "--tool-wait",
          "exp:60",
          "--seed",
          "9",
        ])
      ).records;
    const [a, b] = [await run("wait-a"), await run("wait-b")];
    const edit = jobsOf(a).find((j) => j[0]!.job_calls === 5 && j.length === 5)!;
    expect(edit).toBeDefined();
    // the first call waits nothing; the later ones their draws, kept after the previous call's end
    expect(edit[0]!.tool_wait_ms).toBeUndefined();
    const waits = edit.slice(1).map((r) => r.tool_wait_ms!);
    expect(new Set(waits).size).toBe(4);
    for (let k = 1; k < edit.length; k++)
      expect(edit[k]!.send_ms - edit[k - 1]!.end_ms!).toBeGreaterThanOrEqual(edit[k]!.tool_wait_ms! - 0.5);
    // seeded by the run's seed, the job and the call: the same draws again
    const again = jobsOf(b).find((j) => j[0]!.job_calls === 5 && j.length === 5)!;
    expect(again.slice(1).map((r) => r.tool_wait_ms)).toEqual(waits);
  });

  it("a Weka agent trace replays its recorded sizes: every call's prompt is the trace's `in` (and the unique tag)", async () => {
    const { doc, records } = await sweep("weka", mock.url, ["--levels", "1", "--duration", "3"], WEKA);
    const trace = JSON.parse(readFileSync(WEKA, "utf8")) as {
      requests: { type: string; in?: number; out?: number; requests?: { in: number; out: number }[] }[];
    };
    const ins = trace.requests.flatMap((r) =>
      r.type === "subagent" ? r.requests!.map((x) => x.in) : [r.in!],
    );
    const outs = trace.requests.flatMap((r) =>
      r.type === "subagent" ? r.requests!.map((x) => x.out) : [r.out!],
    );
    const done = jobsOf(records).filter((j) => j.length === ins.length && j.every((r) => r.error === null));
    expect(done.length).toBeGreaterThanOrEqual(1);
    for (const job of done) {
      // the subagent's calls fall between the parent's second and third, in the trace's order
      expect(job.map((r) => r.usage!.prompt_tokens! - TAG_WORDS)).toEqual(ins);
      expect(job.map((r) => r.usage!.completion_tokens)).toEqual(outs);
    }
    expect(doc.config!.agent_sessions).toMatchObject({ format: "weka", sessions: 1, calls: ins.length });
    expect(doc.levels[0]!.jobs!.complete).toBe(done.length);
  });

  it("a system prompt shared across sessions is served from the cache across them (shared_system, a Weka trace's global hash ids); a play's own part never is", async () => {
    const native = join(dir, "shared.jsonl");
    // "solo" asks 4 more tokens: its calls are told apart by their prompt's size
    const session = (id: string, shared: boolean, user: number) => ({
      id,
      system_tokens: 160,
      ...(shared ? { shared_system: true } : {}),
      calls: [
        { user_tokens: user, output_tokens: 4 },
        { tool_result_tokens: 20, output_tokens: 4 },
      ],
    });
    writeFileSync(
      native,
      [session("a", true, 20), session("b", true, 20), session("solo", false, 24)]
        .map((o) => JSON.stringify(o))
        .join("\n"),
    );
    const soloPrompt = 160 + TAG_WORDS + 24;
    const weka = join(dir, "global.jsonl");
    const base = JSON.parse(readFileSync(WEKA, "utf8")) as Record<string, unknown>;
    // two traces of the same agent: the same 400-token system prompt (6 whole 64-token blocks), then their own
    const traceOf = (id: string, own: number) => ({
      ...base,
      id,
      hash_id_scope: "global",
      requests: [{ type: "s", in: 500, out: 4, hash_ids: [1, 2, 3, 4, 5, 6, own, own + 1] }],
    });
    writeFileSync(weka, `${JSON.stringify(traceOf("w1", 100))}\n${JSON.stringify(traceOf("w2", 200))}\n`);
    for (const [file, sharedTokens] of [
      [native, 160],
      [weka, 384],
    ] as const) {
      const { records } = await sweep(
        `shared-${sharedTokens}`,
        mock.url,
        ["--levels", "2", "--requests", "30"],
        file,
      );
      const firsts = jobsOf(records)
        .map((j) => j[0]!)
        .filter((r) => r.turn === 1 && r.error === null);
      expect(firsts.length).toBeGreaterThanOrEqual(8);
      const cachedOf = (r: RequestRecord) => r.usage!.cached_tokens!;
      const solo = firsts.filter((r) => r.usage!.prompt_tokens === soloPrompt);
      const sharing = firsts.filter((r) => r.usage!.prompt_tokens !== soloPrompt);
      // a play's first call finds the shared prompt cached once another play sent it: only the
      // level's first plays (one per user, at once) find it cold; the tag after it keeps the rest apart
      const got = JSON.stringify(sharing.map(cachedOf));
      expect(
        sharing.every((r) => [0, sharedTokens].includes(cachedOf(r))),
        got,
      ).toBe(true);
      expect(sharing.filter((r) => cachedOf(r) === 0).length, got).toBeLessThanOrEqual(2);
      expect(sharing.length).toBeGreaterThanOrEqual(6);
      // a session that does not share: its first call is never served from the cache
      expect(solo.every((r) => cachedOf(r) === 0)).toBe(true);
      expect(solo.length > 0).toBe(file === native);
    }
  });

  it("refuses an open loop and a dataset with it, before anything opens", async () => {
    const r = await runCli([
      "sweep",
      "--base-url",
      "http://127.0.0.1:9",
      "--agent-sessions",
      EXAMPLE,
      "--mode",
      "open",
      "--levels",
      "1",
      "--duration",
      "1",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--agent-sessions needs --mode closed/);
    const d = await runCli([
      "sweep",
      "--base-url",
      "http://127.0.0.1:9",
      "--agent-sessions",
      EXAMPLE,
      "--turns",
      "2",
    ]);
    expect(d.code).toBe(2);
    expect(d.stderr).toMatch(/does not combine with --dataset, --trace, --turns/);
  });
});
