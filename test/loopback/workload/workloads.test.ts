/**
 * Real workloads (#13): `--dataset` sends the file's prompts (chat messages as given) in the
 * seeded shuffle's order with their output lengths, records which file it was, and makes the
 * workload fingerprint cover it. Checked against a recording server in its own process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { datasetOrder } from "../../../src/core/load/requests.ts";
import { readResults } from "../../../src/core/results/files.ts";
import { parseDataset, sharedSystemShare } from "../../../src/core/workload/dataset.ts";
import { runCli } from "../../helpers/cli.ts";
import { startHostileServer } from "../../helpers/hostile-process.ts";

const FILE = resolve(import.meta.dirname, "../../../examples/dataset.jsonl");
let server: Awaited<ReturnType<typeof startHostileServer>>;
let root: string;
const dir = mkdtempSync(join(tmpdir(), "tb-workloads-"));

beforeAll(async () => {
  server = await startHostileServer();
  root = server.root;
});
afterAll(() => {
  server?.stop();
});

const recorded = async (): Promise<{ messages: { role: string; content: string }[]; max_tokens: number }[]> =>
  (await fetch(`${root}/recorded/`)).json();

async function sweep(name: string, args: string[]) {
  const out = join(dir, `${name}.json`);
  const r = await runCli([
    "sweep",
    "--base-url",
    `${root}/record`,
    "--model",
    "hostile",
    "--levels",
    "1",
    "--requests",
    "6",
    "--warmup",
    "0",
    "--metrics-interval-ms",
    "0",
    "--seed",
    "11",
    "--out",
    out,
    ...args,
  ]);
  expect(r.code, r.stderr).toBe(0);
  return readResults(out);
}

describe("--dataset", () => {
  it("sends the file's prompts in the seeded order, messages as given, with their output lengths", async () => {
    const before = (await recorded()).length;
    const { doc } = await sweep("dataset", ["--dataset", FILE]);
    const sent = (await recorded()).slice(before);
    const ds = parseDataset(readFileSync(FILE, "utf8"), "dataset.jsonl");
    const order = datasetOrder(ds.entries.length, 11);
    expect(sent).toHaveLength(6);
    sent.forEach((body, i) => {
      const e = ds.entries[order[i]!]!;
      expect(body.messages).toEqual(e.messages ?? [{ role: "user", content: e.prompt }]);
      expect(body.max_tokens).toBe(e.outputTokens ?? doc.config!.max_tokens);
    });
    // the example's lines open with a few system prompts in common: their share of the prompt text
    const share = sharedSystemShare(ds);
    expect(share).toBeGreaterThan(0);
    expect(doc.config!.dataset).toEqual({
      name: "dataset.jsonl",
      lines: 40,
      sha256: ds.sha256,
      shared_share: Number(share.toFixed(4)),
    });
    // the fingerprint covers the dataset: a synthetic run of the same flags differs
    const synthetic = await sweep("synthetic", ["--calibrate-prompts", "false"]);
    expect(synthetic.doc.workload_fingerprint).not.toBe(doc.workload_fingerprint);
  });

  it("ShareGPT layout: the first human turn of each conversation", async () => {
    const share = join(dir, "sharegpt.json");
    writeFileSync(
      share,
      JSON.stringify([
        {
          conversations: [
            { from: "human", value: "first question" },
            { from: "gpt", value: "answer" },
          ],
        },
        {
          conversations: [
            { from: "system", value: "sys" },
            { from: "human", value: "second question" },
          ],
        },
      ]),
    );
    const before = (await recorded()).length;
    await sweep("sharegpt", ["--dataset", share, "--requests", "2"]);
    const sent = (await recorded())
      .slice(before)
      .map((b) => b.messages[0]!.content)
      .sort();
    expect(sent).toEqual(["first question", "second question"]);
  });

  it("a bad line is named with its file and line, before any request", async () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, '{"prompt": "ok"}\n{"messages": [{"role": "wizard", "content": "x"}]}\n');
    const before = (await recorded()).length;
    const r = await runCli(["sweep", "--base-url", `${root}/record`, "--model", "hostile", "--dataset", bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[dataset_invalid\]: bad\.jsonl: line 2: messages\[0\] must be/);
    expect((await recorded()).length).toBe(before);
  });
});

describe("--ramp-up-s", () => {
  it("closed loop: users join one by one over the ramp; ramp requests are excluded and counted", async () => {
    const { doc, records } = await sweep("ramp-closed", [
      "--base-url",
      `${root}/slow-ish`,
      "--levels",
      "4",
      "--requests",
      "8",
      "--ramp-up-s",
      "1",
      "--calibrate-prompts",
      "false",
      "--records",
      "file",
    ]);
    const ramp = records.filter((r) => r.ramp);
    const measured = records.filter((r) => !r.warmup);
    const level = doc.levels[0]!;
    expect(ramp.length).toBeGreaterThan(0);
    expect(level.ramp_requests).toBe(ramp.length);
    expect(level.requests).toBe(8);
    expect(measured).toHaveLength(8);
    // the ramp's origin: when its first user was due (each user's first ramp send keeps its due time)
    const due = ramp.map((r) => r.intended_send_ms).filter((t): t is number => t !== null);
    expect(due).toHaveLength(4);
    const t0 = Math.min(...due);
    for (const r of ramp)
      if (r.intended_send_ms !== null) expect(r.send_ms).toBeGreaterThanOrEqual(r.intended_send_ms);
    // users due a quarter of the ramp apart
    expect([...due].sort((a, b) => a - b).map((t) => Math.round(t - t0))).toEqual([0, 250, 500, 750]);
    // every measured request went out after the ramp; the ramp's first quarter has fewer users than its last
    for (const r of measured) expect(r.send_ms - t0).toBeGreaterThanOrEqual(1000 - 1e-6);
    const inQuarter = (a: number, b: number) =>
      ramp.filter((r) => r.send_ms - t0 >= a && r.send_ms - t0 < b).length;
    expect(inQuarter(0, 250)).toBeLessThan(inQuarter(750, 1000));
    expect(doc.config!.ramp_up_s).toBe(1);
  });

  it("open loop: the rate rises linearly from 0: arrivals at sqrt(2 k ramp / rate)", async () => {
    const { records, doc } = await sweep("ramp-open", [
      "--mode",
      "open",
      "--levels",
      "20",
      "--requests",
      "10",
      "--ramp-up-s",
      "1",
      "--calibrate-prompts",
      "false",
      "--records",
      "file",
    ]);
    const ramp = records.filter((r) => r.ramp).sort((a, b) => a.intended_send_ms! - b.intended_send_ms!);
    expect(ramp).toHaveLength(10); // 20 req/s x 1 s / 2
    // the schedule itself, to the microsecond
    const t0 = ramp[0]!.intended_send_ms!;
    for (const [k, r] of ramp.entries())
      expect(r.intended_send_ms! - t0).toBeCloseTo(Math.sqrt(2 * k * 1000 * 50), 3);
    // and each went out when it was due, as late as the client's timers were (its self-check,
    // which samples every 10 ms: a shorter stall between two samples goes unseen, so the latest
    // send may pass the bound itself on a busy machine; see test/helpers/lateness.ts)
    const late =
      (doc.levels[0]!.client.lateness_bound_ms ?? 1) + (doc.levels[0]!.client.send_queue_ms?.max ?? 0) + 1;
    const lags = ramp.map((r) => r.send_ms - r.intended_send_ms!).sort((a, b) => a - b);
    expect(lags[0]!).toBeGreaterThanOrEqual(-0.5);
    expect(lags[Math.floor(lags.length / 2)]!).toBeLessThanOrEqual(late);
    expect(lags[lags.length - 1]!).toBeLessThanOrEqual(2 * late);
    expect(records.filter((r) => !r.warmup)).toHaveLength(10);
  });
});

describe("--shared-prefix-tokens --prefix-groups", () => {
  it("each group's prompts begin with the same prefix, other groups' with another", async () => {
    const before = (await recorded()).length;
    await sweep("prefix-sent", [
      "--shared-prefix-tokens",
      "40",
      "--prefix-groups",
      "2",
      "--requests",
      "6",
      "--calibrate-prompts",
      "false",
    ]);
    const sent = (await recorded()).slice(before).map((b) => b.messages[0]!.content);
    expect(sent).toHaveLength(6);
    const prefix = (s: string) => s.split("\n")[0]!;
    const groups = new Map<string, number>();
    for (const s of sent) groups.set(prefix(s), (groups.get(prefix(s)) ?? 0) + 1);
    expect([...groups.values()].sort()).toEqual([3, 3]);
    for (const p of groups.keys()) expect(p.split(" ").length).toBe(40);
    expect(new Set(sent).size).toBe(6); // the rest of each prompt is its own
  });

  it("against the mock's prefix cache: the shared prefix shows as cached tokens, reported per level", async () => {
    const { startMock } = await import("../../helpers/mock-process.ts");
    const m = await startMock({ ttftMs: 5, itlMs: 1 });
    try {
      const run = async (name: string, extra: string[]) => {
        const out = join(dir, `${name}.json`);
        const r = await runCli([
          "sweep",
          "--base-url",
          m.url,
          "--levels",
          "1",
          "--requests",
          "8",
          "--warmup",
          "0",
          "--prompt-tokens",
          "40",
          "--max-tokens",
          "4",
          "--metrics-interval-ms",
          "0",
          "--calibrate-prompts",
          "false",
          "--out",
          out,
          ...extra,
        ]);
        expect(r.code, r.stderr).toBe(0);
        return readResults(out).doc.levels[0]!;
      };
      const shared = await run("prefix-mock", ["--shared-prefix-tokens", "200", "--prefix-groups", "2"]);
      const unique = await run("no-prefix-mock", []);
      expect(shared.cached_tokens_pct).toBeGreaterThan(50);
      expect(unique.cached_tokens_pct ?? 0).toBeLessThan(shared.cached_tokens_pct! / 2);
    } finally {
      await m.close();
    }
  });
});

describe("--mode search", () => {
  // 16 slots, each held 60 ms + 31 x 12 ms and refilled 12 ms after it frees (the mock's --help):
  // 16 / 0.444 s = 36.0 req/s for 32 tokens. bench/search.ts runs 5 seeds of each arrival kind.
  const capacity = 16 / 0.444;
  it.each(["poisson", "constant"])(
    "%s arrivals: the answer within -10 and +3 percent of the mock's capacity, never above what the passing probe delivered",
    async (arrival) => {
      const { startMock } = await import("../../helpers/mock-process.ts");
      const m = await startMock({ ttftMs: 60, itlMs: 12, capacity: 16, prefixCacheTokens: 0 });
      try {
        const out = join(dir, `search-${arrival}.json`);
        const r = await runCli(
          [
            "sweep",
            "--base-url",
            m.url,
            "--mode",
            "search",
            // the search's own defaults: a start of 1 req/s and 8 probes
            "--max-tokens",
            "32",
            "--ignore-eos",
            "--slo-ttft-ms",
            "500",
            "--arrival",
            arrival,
            "--warmup",
            "0",
            "--calibrate-prompts",
            "false",
            "--metrics-interval-ms",
            "0",
            "--out",
            out,
          ],
          { timeoutMs: 240_000 },
        );
        expect(r.code, r.stderr).toBe(0);
        const { doc } = readResults(out);
        const s = doc.saturation!;
        expect(doc.levels).toHaveLength(s.probes);
        expect(s.probes).toBeLessThanOrEqual(8);
        const answer = s.max_rate_rps!;
        expect(
          answer / capacity - 1,
          `answer ${answer} vs capacity ${capacity.toFixed(1)}`,
        ).toBeGreaterThanOrEqual(-0.1);
        expect(
          answer / capacity - 1,
          `answer ${answer} vs capacity ${capacity.toFixed(1)}`,
        ).toBeLessThanOrEqual(0.03);
        // never above what a passing probe delivered in its steady window
        const passing = doc.levels.filter((l) => l.steady_state?.steady && (l.slo_pass_pct ?? 0) >= 90);
        const delivered = Math.max(...passing.map((l) => l.steady_state!.completed_rps!));
        expect(answer).toBeLessThanOrEqual(delivered + 1e-9);
        // each probe ran long enough for a queue to show, whatever --requests said (32 by default)
        for (const l of doc.levels) expect(l.requests).toBeGreaterThanOrEqual(Math.ceil(l.level * 4));
        const [lo, hi] = s.bracket_rps;
        expect((hi! - lo!) / hi!).toBeLessThanOrEqual(0.03);
        expect(s.method).toMatch(/steady window/);
        expect(doc.config!.mode).toBe("open");
        expect(r.stdout).toMatch(/sustains \d+(\.\d+)? req\/s under SLO \(bracket [\d.]+–[\d.]+/);
      } finally {
        await m.close();
      }
    },
    300_000,
  );

  it("without an SLO, or with several starting levels, it is a usage error", async () => {
    const a = await runCli([
      "sweep",
      "--base-url",
      `${root}/record`,
      "--model",
      "hostile",
      "--mode",
      "search",
      "--duration",
      "1",
    ]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/search needs an SLO/);
    const b = await runCli([
      "sweep",
      "--base-url",
      `${root}/record`,
      "--model",
      "hostile",
      "--mode",
      "search",
      "--duration",
      "1",
      "--slo-ttft-ms",
      "100",
      "--levels",
      "1,2",
    ]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/one starting rate/);
  });
});
