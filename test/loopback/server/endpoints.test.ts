/**
 * Several servers in one run (`--base-url A,B`): two mocks in their own processes with different
 * capacities. Every figure per server is checked against that server's own account (its request
 * count, its /metrics) and against the records the client tagged; the imbalance by hand.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readResults } from "../../../src/core/results/files.ts";
import type { RequestRecord } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-endpoints-"));

/** A fast server (8 slots, 2 ms per token) and a slow one (2 slots, 8 ms per token), fresh per run. */
async function pair(): Promise<[MockProcess, MockProcess]> {
  return Promise.all([
    startMock({ ttftMs: 5, itlMs: 2, capacity: 8, flavor: "vllm" }),
    startMock({ ttftMs: 5, itlMs: 8, capacity: 2, flavor: "vllm" }),
  ]);
}

async function sweep(name: string, urls: string[], args: string[]) {
  const out = join(dir, `${name}.json`);
  const r = await runCli([
    "sweep",
    "--base-url",
    urls.join(","),
    "--calibrate-prompts",
    "false",
    "--metrics-interval-ms",
    "50",
    "--max-tokens",
    "16",
    "--records",
    "file",
    "--out",
    out,
    ...args,
  ]);
  expect(r.code, r.stderr).toBe(0);
  const { doc, records } = readResults(out);
  return { doc: doc!, records: records as RequestRecord[], stderr: r.stderr };
}

const tokens = (rs: readonly RequestRecord[]) =>
  rs.reduce((a, r) => a + (r.error === null ? (r.usage?.completion_tokens ?? 0) : 0), 0);

describe("--base-url A,B: one run over several servers", () => {
  let mocks: [MockProcess, MockProcess];
  beforeAll(async () => {
    mocks = await pair();
  });
  afterAll(async () => {
    for (const m of mocks ?? []) await m.close();
  });

  it("least-in-flight sends more to the faster server; each server's figures are its own", async () => {
    const before = await Promise.all(mocks.map((m) => m.stats()));
    const { doc, records } = await sweep(
      "least",
      mocks.map((m) => m.url),
      ["--endpoint-strategy", "least-in-flight", "--levels", "8", "--requests", "96", "--warmup", "4"],
    );
    const after = await Promise.all(mocks.map((m) => m.stats()));
    expect(doc.config!.endpoints).toEqual({
      base_urls: mocks.map((m) => m.url),
      strategy: "least-in-flight",
    });
    // every request tagged with its server; each server served exactly the requests sent to it
    // (the second also answered the preflight's one-token check that it serves the model)
    for (const [i, m] of mocks.entries()) {
      const mine = records.filter((r) => r.endpoint === i);
      expect(after[i]!.requests - before[i]!.requests, m.url).toBe(mine.length + (i === 1 ? 1 : 0));
    }
    expect(records.every((r) => r.endpoint === 0 || r.endpoint === 1)).toBe(true);
    const l = doc.levels[0]!;
    const e = l.endpoints!;
    expect(e.strategy).toBe("least-in-flight");
    const measured = records.filter((r) => !r.warmup);
    for (const [i, fig] of e.by_endpoint.entries()) {
      const mine = measured.filter((r) => r.endpoint === i);
      expect(fig.base_url).toBe(mocks[i]!.url);
      expect(fig.requests).toBe(mine.length);
      expect(fig.output_tokens).toBe(tokens(mine));
      // its own /metrics: never more running than its slots
      expect(fig.metrics!.running_mean!).toBeGreaterThan(0);
      expect(fig.metrics!.running_mean!).toBeLessThanOrEqual(i === 0 ? 8 : 2);
    }
    expect(e.by_endpoint[0]!.requests + e.by_endpoint[1]!.requests).toBe(l.requests);
    // the fast server had free slots more often: it got most of the work
    expect(e.by_endpoint[0]!.requests_pct).toBeGreaterThan(60);
    // the slow server's streams take 4 times as long per token
    expect(e.by_endpoint[1]!.e2e_p50_ms!).toBeGreaterThan(e.by_endpoint[0]!.e2e_p50_ms!);
    // imbalance by hand: the busiest server's tokens over an even share, minus 1
    const t = [0, 1].map((i) => tokens(measured.filter((r) => r.endpoint === i)));
    expect(e.imbalance!).toBeCloseTo(Math.max(...t) / ((t[0]! + t[1]!) / 2) - 1, 9);
    expect(e.imbalance!).toBeGreaterThan(0.2);
    // the servers' rates sum to the level's
    expect(e.by_endpoint[0]!.output_tok_s + e.by_endpoint[1]!.output_tok_s).toBeCloseTo(l.output_tok_s, 6);
    // the level's /metrics sums the servers' running requests: more than either alone can hold
    const peak = Math.max(...(l.metrics_timeline ?? []).map((s) => s.running ?? 0));
    expect(peak).toBeGreaterThan(2);
    expect(peak).toBeLessThanOrEqual(10);
  }, 60_000);

  it("round-robin alternates by request number, conversations stay on the server of their first turn", async () => {
    const { doc, records } = await sweep(
      "round",
      mocks.map((m) => m.url),
      ["--levels", "4", "--requests", "24", "--warmup", "0", "--turns", "3"],
    );
    const measured = records.filter((r) => !r.warmup);
    for (const r of measured) expect(r.endpoint, `request ${r.id}`).toBe(r.session! % 2);
    const e = doc.levels[0]!.endpoints!;
    expect(e.strategy).toBe("round-robin");
    // each server's count is its conversations' turns: those whose first turn's number it took
    // (which conversations start on an even number is the timing's: no even split is promised)
    for (const i of [0, 1])
      expect(e.by_endpoint[i]!.requests).toBe(measured.filter((r) => r.session! % 2 === i).length);
  }, 60_000);
});

describe("--base-url A,B: refused before anything opens", () => {
  it("the same server twice, a strategy with one server, a started server, an A/B pair", async () => {
    const cases: [string[], RegExp][] = [
      [["--base-url", "http://127.0.0.1:1,http://127.0.0.1:1/"], /names the same server twice/],
      [
        ["--base-url", "http://127.0.0.1:1", "--endpoint-strategy", "least-in-flight"],
        /needs several servers/,
      ],
      [
        ["--base-url", "http://127.0.0.1:1,http://127.0.0.1:2", "--server-command", "sleep 100"],
        /tokenbench starts one server/,
      ],
      [
        ["--base-url", "http://127.0.0.1:1,http://127.0.0.1:2", "--ab-base-url", "http://127.0.0.1:3"],
        /an A\/B pair compares one server with one/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(["sweep", ...args, "--out", join(dir, "refused.json")]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const p = await runCli(["profile", "--base-url", "http://127.0.0.1:1,http://127.0.0.1:2"]);
    expect(p.code).toBe(2);
    expect(p.stderr).toMatch(/a profile measures one server alone/);
  });

  it("a second server that does not serve the first one's model: model_not_served, naming it", async () => {
    const [a, b] = await Promise.all([
      startMock({ ttftMs: 1, itlMs: 1 }),
      startMock({ model: "other-model" }),
    ]);
    try {
      const r = await runCli([
        "sweep",
        "--base-url",
        `${a.url},${b.url}`,
        "--levels",
        "1",
        "--requests",
        "2",
        "--out",
        join(dir, "mismatch.json"),
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("[model_not_served]");
      expect(r.stderr).toContain(
        `${b.url} (one of the --base-url servers) does not answer model "mock-model"`,
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
