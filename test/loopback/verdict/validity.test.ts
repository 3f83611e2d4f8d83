/// <reference lib="dom" />
// Every reason a level is not valid, made to happen for real and read on every surface. One
// healthy base run; each head is the same workload against a mock (in its own process) or a client
// that makes one reason happen: a client starved by a busy loop in its own process, a server that
// fails a fifth of its requests, one that ignores ignore_eos, one that serves every prompt from a
// cache, one whose finish reasons moved, a level shorter than the steady window asked, a GPU tool
// that dies, an open-loop client too starved to keep its arrival schedule, and an open-loop server
// far behind. For each: the reason
// and its figure in the document, its rows "not judged" by `tokenbench compare` and in the Action's
// comment (a baseline file), and a gate that does not fail on them. The client-bound head also
// goes through the results service: its API rows and the dashboard's run page. The same pair
// without the busy loop is judged as before; another driver and server version are named in the
// comment's first lines; a server that answers differently at temperature 0 is named.
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeNvidiaSmiPath } from "../../../scripts/fake-gpu.ts";
import { type LocalService, startService } from "../../../scripts/local-service.ts";
import { runAction } from "../../../scripts/run-action.ts";
import type { MockOptions } from "../../../src/mock/index.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import type { CompareResponse } from "../../../src/shared/api-types.ts";
import type { VerdictRow } from "../../../src/shared/verdict.ts";
import { launchChromium, newPage, waitReady } from "../../helpers/browser.ts";
import { ROOT, runCli } from "../../helpers/cli.ts";
import { startGitHubApi } from "../../helpers/github-api.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tokenbench-validity-"));
// The suite's other files load this 2-core machine beside these sweeps: a client-late floor of
// 60 ms keeps an ordinary run valid there, and a client starved by its own busy loop (about 80 ms
// late) still reads client-bound.
const WORKLOAD = [
  ...["--levels", "1,4", "--requests", "96", "--max-tokens", "16", "--quiet"],
  ...["--client-late-floor-ms", "60"],
];
const HEALTHY: Partial<MockOptions> = { ttftMs: 30, itlMs: 5, capacity: 16 };
const BUSY = ["--import", join(ROOT, "test/helpers/busy-client.mjs")];
const SMI_PATH = fakeNvidiaSmiPath();
const gpuEnv = (extra: Record<string, string> = {}) => ({ PATH: SMI_PATH, ...extra });

interface Run {
  path: string;
  doc: ResultDocument;
}

async function sweep(
  name: string,
  mock: Partial<MockOptions>,
  extra: string[] = [],
  o: {
    nodeArgs?: string[];
    env?: Record<string, string>;
    workload?: string[];
    code?: number;
    timeoutMs?: number;
  } = {},
): Promise<Run> {
  const m: MockProcess = await startMock(mock);
  try {
    const path = join(dir, `${name}.json`);
    const r = await runCli(
      ["sweep", "--base-url", m.url, ...(o.workload ?? WORKLOAD), ...extra, "--out", path],
      {
        timeoutMs: o.timeoutMs ?? 120_000,
        ...(o.nodeArgs ? { nodeArgs: o.nodeArgs } : {}),
        ...(o.env ? { env: o.env } : {}),
      },
    );
    expect(r.code, r.stderr).toBe(o.code ?? 0);
    return { path, doc: parseResultDocument(JSON.parse(readFileSync(path, "utf8"))) };
  } finally {
    await m.close();
  }
}

async function compare(
  base: Run,
  head: Run,
  code = 0,
): Promise<{ rows: VerdictRow[]; gate: { status: string; failed: string[] }; md: string }> {
  const json = await runCli(["compare", base.path, head.path, "--format", "json"]);
  expect(json.code, json.stderr).toBe(code);
  const md = await runCli(["compare", base.path, head.path]);
  return { ...JSON.parse(json.stdout), md: md.stdout };
}

/** The Action's comment for the head against the base file, as a pull request would get it. */
async function comment(base: Run, head: Run, code = 0): Promise<string> {
  const ws = mkdtempSync(join(dir, "ws-"));
  copyFileSync(head.path, join(ws, "results.json"));
  copyFileSync(base.path, join(ws, "base.json"));
  const r = await runAction(
    { "publish-results": "results.json", baseline: "base.json", testbed: "validity", "results-url": "" },
    {
      GITHUB_REPOSITORY: "acme/validity",
      GITHUB_EVENT_NAME: "pull_request",
      GITHUB_REF: "refs/pull/5/merge",
      GITHUB_SHA: "5".repeat(40),
      GITHUB_RUN_ID: "55",
      GITHUB_HEAD_REF: "f",
      GITHUB_BASE_REF: "main",
    },
    {
      pull_request: {
        number: 5,
        head: { sha: "6".repeat(40), ref: "f", repo: { full_name: "acme/validity" } },
        base: { ref: "main" },
      },
    },
    { workspace: ws },
  );
  expect(r.code, r.log).toBe(code);
  return r.outputs.markdown!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
}

const reasonsOf = (d: ResultDocument, level: number) =>
  d.levels.find((l) => l.level === level)!.validity!.reasons;
const pick = (rows: VerdictRow[], benchmark: string, measure: string) =>
  rows.find((r) => r.benchmark === benchmark && r.measure === measure)!;

describe("every reason a level is not valid, on every surface", () => {
  let base: Run;
  beforeAll(async () => {
    base = await sweep("base", HEALTHY);
    expect(base.doc.validity!.status).toBe("valid");
  }, 180_000);

  it("too few samples for a p99: the row says what it needs, the level stays valid", async () => {
    expect(reasonsOf(base.doc, 1)).toContainEqual(
      expect.objectContaining({ code: "too_few_samples", affects: ["ttft_p99_ms"], bound: 299 }),
    );
    const healthy = await sweep("healthy", HEALTHY);
    const c = await compare(base, healthy);
    expect(pick(c.rows, "closed c=1", "ttft_p99_ms")).toMatchObject({
      verdict: "not_judged",
      reason: expect.stringMatching(/p99 needs ≥ 299 samples/),
    });
    // the same pair, both healthy: every latency row is judged (no busy loop, nothing invalid),
    // unless the machine itself made a run's client read late past the floor (a suite beside six
    // busy loops did): then only for that measured reason, said on the row
    const clientLate = [base.doc, healthy.doc].some((d) =>
      reasonsOf(d, 4).some((r) => r.code === "client_bound"),
    );
    for (const m of ["ttft_p50_ms", "ttft_p95_ms", "itl_p50_ms", "output_tok_s"]) {
      const row = pick(c.rows, "closed c=4", m);
      if (row.verdict === "not_judged" && clientLate) expect(row.reason, m).toMatch(/client-bound/);
      else expect(row.verdict, `${m}: ${row.reason}`).not.toBe("not_judged");
    }
  }, 180_000);

  const cases: {
    name: string;
    code: string;
    head: () => Promise<Run>;
    /** Its own base, where the shared one would not do (the same workload, healthy). */
    base?: () => Promise<Run>;
    gateFails?: boolean;
    /** The reason's words in the comment's "Not valid" line. */
    words: RegExp;
  }[] = [
    {
      name: "a client starved by a busy loop in its own process",
      code: "client_bound",
      head: () => sweep("busy", HEALTHY, [], { nodeArgs: BUSY }),
      words: /client-bound: it read what the server sent up to about [\d.]+ ms late/,
    },
    {
      name: "a server that fails a fifth of its requests",
      code: "error_rate",
      // the sweep itself exits 1 above --max-error-rate, with everything measured written
      head: () =>
        sweep("errors", { ...HEALTHY, faults: [{ kind: "http500", rate: 0.2, every: null }] }, [], {
          code: 1,
        }),
      words: /\d+ of 96 requests failed \(over 5 %\)/,
      // the error rate itself is judged, and a rise of 20 points fails the gate: what breaks regresses
      gateFails: true,
    },
    {
      name: "a server that ignores ignore_eos",
      code: "short_output",
      head: () => sweep("short", { ...HEALTHY, faults: [{ kind: "early_stop", rate: 1, every: null }] }),
      words: /outputs shorter than asked: 8(\.0+)? tokens on average for 16/,
    },
    {
      name: "a server that serves every prompt from a cache",
      code: "cache_unasked",
      head: () => sweep("cached", { ...HEALTHY, faults: [{ kind: "cache_all", rate: 1, every: null }] }),
      words:
        /cached tokens the workload did not ask for: the server reported \d+ of \d+ prompt tokens cached/,
    },
    {
      // --min-steady-s is the harness's, not the workload's: the same workload, a window it cannot have
      name: "a level shorter than the steady window asked",
      code: "no_steady_state",
      head: () => sweep("unsteady", HEALTHY, ["--min-steady-s", "60"]),
      words: /no steady state: the window lasted [\d.]+ s, under the 60\.0 s asked/,
    },
    {
      name: "a GPU tool that dies mid-sweep",
      code: "telemetry_gap",
      base: () => sweep("gpu-base", HEALTHY, ["--gpu-sample-ms", "100"], { env: gpuEnv() }),
      // it dies during the first level (about 10 s long), so the second has no GPU figures
      head: () =>
        sweep("gpu-dies", HEALTHY, ["--gpu-sample-ms", "100"], {
          env: gpuEnv({ FAKE_SMI_EXIT_AFTER_MS: "4000" }),
        }),
      words: /GPU figures unknown/,
    },
  ];
  for (const k of cases)
    it(`${k.name}: ${k.code}, its rows not judged by compare and in the comment; the gate does not fail on them`, async () => {
      const b = k.base ? await k.base() : base;
      const head = await k.head();
      const levels = head.doc.levels.filter((l) => l.validity!.reasons.some((r) => r.code === k.code));
      expect(levels.length, JSON.stringify(head.doc.levels.map((l) => l.validity))).toBeGreaterThan(0);
      const reason = levels[0]!.validity!.reasons.find((r) => r.code === k.code)!;
      const where = `closed c=${levels[0]!.level}`;
      const c = await compare(b, head, k.gateFails ? 1 : 0);
      // the measures the reason covers read "not judged", with the reason's words
      const affected = c.rows.filter(
        (r) =>
          r.benchmark === where &&
          (reason.affects.includes(r.measure) ||
            (reason.affects.includes("latency") && /^(ttft|itl|tpot|e2e)_/.test(r.measure)) ||
            (reason.affects.includes("gpu") && /joule|watt|gpu|tok_per_j|usd/.test(r.measure))),
      );
      expect(affected.length).toBeGreaterThan(0);
      for (const r of affected) {
        expect(r.verdict, `${r.measure}: ${r.reason}`).toBe("not_judged");
        expect(r.reason).toMatch(/^head /);
      }
      if (k.gateFails) {
        expect(c.gate.status).toBe("failed");
        expect(c.gate.failed.every((key) => key.endsWith("\u0000error_rate"))).toBe(true);
      } else expect(c.gate.status).not.toBe("failed");
      expect(c.md).toMatch(/Not valid \(rows at these levels are not judged\)/);
      const md = await comment(b, head, k.gateFails ? 1 : 0);
      expect(md).toMatch(/\*\*Not valid\*\* \(rows at these levels are not judged\)/);
      expect(md).toMatch(k.words);
    }, 180_000);

  it("finish reasons that moved: the level's rows are not judged, named", async () => {
    const head = await sweep("finish", {
      ...HEALTHY,
      faults: [{ kind: "early_stop", rate: 0.15, every: null }],
    });
    // 15 % of answers stopped at half: short of the 90 % bound on average, but another mix of endings
    expect(head.doc.levels.every((l) => (l.finish_reasons?.stop ?? 0) > 5)).toBe(true);
    const c = await compare(base, head);
    expect(pick(c.rows, "closed c=4", "ttft_p50_ms")).toMatchObject({
      verdict: "not_judged",
      reason: expect.stringMatching(/finish reasons/),
    });
  }, 180_000);

  it("an open-loop client too starved to keep its arrival schedule: the load was not the one asked", async () => {
    const workload = [
      "--mode",
      "open",
      "--levels",
      "200",
      // 256 requests, a 1.28 s schedule: the rate may be off by 3/sqrt(256) = 19 %, so a stall of
      // the unstarved client's under a quarter of a second (the suite's other files share both
      // cores) keeps its load the one asked (64 requests in 0.32 s read off the rate from 190 ms)
      "--requests",
      "256",
      "--max-tokens",
      "8",
      "--quiet",
    ];
    const mock = { ttftMs: 5, itlMs: 1, capacity: 64 };
    const ok = await sweep("shape-base", mock, [], { workload });
    const starved = await sweep("shape-starved", mock, [], {
      workload,
      nodeArgs: BUSY,
      // Blocked 2 s of every 2.01 s, longer than the 1.28 s schedule: its sends leave only in the
      // 10 ms between blocks, so they lie in one gap (thousands of req/s) or span a block (256 in
      // 2 s or more: 37 % under the rate or further), never near the rate asked. (At 1 s of 1.01 s
      // a busy machine's late timers once stretched the span to within 19 % of the schedule's.) A
      // client blocked for short stretches catches up in bursts whose mean rate can still be the
      // one asked.
      // from the level's first send (past 5 completions requests of the prompt calibration and
      // the client's warm path, and 2 warm-ups) for 6 s: its sends span at least 2 s, or 6 s
      // where a busy machine leaves it no time in the gaps (256 at 43 req/s or under), never the
      // rate asked; its start, summary and writing run at full speed
      env: {
        TB_BUSY_MS: "2000",
        TB_BUSY_EVERY_MS: "2010",
        TB_BUSY_FROM: "chat",
        TB_BUSY_SKIP: "7",
        TB_BUSY_FOR_MS: "6000",
      },
      timeoutMs: 300_000,
    });
    expect(ok.doc.levels[0]!.validity!.reasons.map((r) => r.code)).not.toContain("load_shape");
    expect(reasonsOf(starved.doc, 200)).toContainEqual(
      expect.objectContaining({
        code: "load_shape",
        bound: 200,
        text: expect.stringMatching(/the load was not the one asked: [\d.]+ req\/s sent for 200/),
      }),
    );
    const c = await compare(ok, starved);
    expect(pick(c.rows, "open 200 req/s", "output_tok_s").verdict).toBe("not_judged");
  }, 480_000);

  it("an open-loop server far behind: the server fell behind, with what finished against what arrived", async () => {
    const workload = [
      "--mode",
      "open",
      "--levels",
      "10",
      "--requests",
      "64",
      "--max-tokens",
      "16",
      "--quiet",
    ];
    const ok = await sweep("open-base", { ttftMs: 20, itlMs: 2, capacity: 16 }, [], { workload });
    const behind = await sweep("open-behind", { ttftMs: 20, itlMs: 20, capacity: 1 }, [], { workload });
    expect(ok.doc.levels[0]!.validity!.reasons.map((r) => r.code)).not.toContain("fell_behind");
    expect(reasonsOf(behind.doc, 10)).toContainEqual(
      expect.objectContaining({
        code: "fell_behind",
        text: expect.stringMatching(
          /the server fell behind: \d+ requests finished in the .* while 64 arrived, and E2E rose/,
        ),
      }),
    );
    const c = await compare(ok, behind);
    expect(pick(c.rows, "open 10 req/s", "output_tok_s").verdict).toBe("not_judged");
    expect(c.gate.status).not.toBe("failed");
  }, 240_000);

  it("another driver and server version: named in the comment's first lines; other answers at temperature 0: named", async () => {
    const consist = ["--consistency", "4"];
    const a = await sweep("env-a", { ...HEALTHY, flavor: "vllm" }, [...consist, "--gpu-sample-ms", "100"], {
      env: gpuEnv({ FAKE_SMI_DRIVER: "550.54" }),
    });
    const b = await sweep(
      "env-b",
      { ...HEALTHY, flavor: "vllm", serverVersion: "0.12.0", answerVariant: 1 },
      [...consist, "--gpu-sample-ms", "100"],
      {
        env: gpuEnv({ FAKE_SMI_DRIVER: "555.42" }),
      },
    );
    const same = await sweep("env-a2", { ...HEALTHY, flavor: "vllm" }, consist, {});
    const md = await comment(a, b);
    const top = md.slice(0, md.indexOf("| "));
    expect(top).toMatch(
      /Another environment: driver 550\.54 → 555\.42, server version 0\.11\.0\+tokenbench\.mock → 0\.12\.0\.\*\* Every row below is judged across it\./,
    );
    expect(top).toMatch(
      /Answers differ: 4 of 4 fixed prompts at temperature 0 answered otherwise than the base \(the first, prompt 0, from character \d+/,
    );
    const c = await compare(a, same);
    expect(c.md).toMatch(/Answers unchanged: the 4 fixed prompts at temperature 0 answered as in the base\./);
    expect(c.md).not.toMatch(/Another environment/);
  }, 240_000);
});

describe.skipIf(process.env.TOKENBENCH_SKIP_BROWSER === "1")(
  "a client-bound head through the results service",
  () => {
    let service: LocalService;
    let gh: Awaited<ReturnType<typeof startGitHubApi>>;
    let browser: Browser;
    beforeAll(async () => {
      [service, gh] = await Promise.all([startService(), startGitHubApi({ runs: [], pulls: [] })]);
      browser = await launchChromium();
    }, 180_000);
    afterAll(async () => {
      await browser?.close();
      await Promise.all([service?.stop(), gh?.close()]);
    });

    it("the API's and the run page's latency rows read not judged: client-bound; the gate does not fail", async () => {
      const repo = "acme/validity-service";
      const base = await sweep("svc-base", HEALTHY);
      const head = await sweep("svc-busy", HEALTHY, [], { nodeArgs: BUSY });
      const token = await service.apiToken(repo);
      const publish = async (run: Run, github: Record<string, string>, payload: unknown) => {
        const ws = mkdtempSync(join(dir, "svc-"));
        copyFileSync(run.path, join(ws, "results.json"));
        const r = await runAction(
          {
            "publish-results": "results.json",
            testbed: "validity",
            "results-url": service.url,
            "api-token": token,
            "github-token": "ghs_test",
          },
          {
            GITHUB_REPOSITORY: repo,
            GITHUB_API_URL: gh.url,
            GITHUB_SERVER_URL: "https://github.example",
            GITHUB_RUN_ATTEMPT: "1",
            ...github,
          },
          payload,
          { workspace: ws },
        );
        expect(r.code, r.log).toBe(0);
        return r;
      };
      await publish(
        base,
        {
          GITHUB_EVENT_NAME: "push",
          GITHUB_REF: "refs/heads/main",
          GITHUB_SHA: "1".repeat(40),
          GITHUB_RUN_ID: "71",
        },
        {},
      );
      const pr = await publish(
        head,
        {
          GITHUB_EVENT_NAME: "pull_request",
          GITHUB_REF: "refs/pull/9/merge",
          GITHUB_SHA: "9".repeat(40),
          GITHUB_RUN_ID: "72",
          GITHUB_HEAD_REF: "busy",
          GITHUB_BASE_REF: "main",
        },
        {
          pull_request: {
            number: 9,
            head: { sha: "8".repeat(40), ref: "busy", repo: { full_name: repo, fork: false } },
            base: { ref: "main", repo: { full_name: repo } },
          },
        },
      );
      const id = /\/runs\/([0-9a-f]{16})$/.exec(pr.outputs["run-url"]!)![1]!;
      const api = (await (
        await fetch(`${service.url}/api/v1/repos/${repo}/compare?head=${id}`)
      ).json()) as CompareResponse;
      const ttft = api.rows.find((r) => r.benchmark === "closed c=4" && r.measure === "ttft_p50_ms")!;
      expect(ttft).toMatchObject({
        verdict: "not_judged",
        reason: expect.stringMatching(/^head client-bound/),
      });
      expect(api.gate.status).not.toBe("failed");
      expect(api.failed).toBe(false);
      const page = await newPage(browser);
      await page.goto(`${service.url}/runs/${id}`);
      await waitReady(page, service.log);
      expect(await page.textContent("p.invalid")).toMatch(
        /^Not valid \(rows at these levels are not judged\): c=1: client-bound/,
      );
      const row = await page.$$eval("table.verdicts tbody tr", (trs) =>
        trs
          .map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? ""))
          .find((c) => c[0] === "closed c=4" && c[1]!.startsWith("TTFT p50")),
      );
      expect(row!.at(-1)).toMatch(/not judged/);
      await page.close();
    }, 300_000);
  },
);
