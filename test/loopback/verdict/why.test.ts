/**
 * Why TTFT moved, against mocks of one injected cause each (llama.cpp's flavour: its stream
 * carries the server's prompt time): fewer slots than users moves the queue part, a slower prefill
 * and a disabled prefix cache move the prefill part (the latter with the uncached tokens), a client
 * starved by its own work moves the client part. The verdict's rows carry each side's parts from
 * the same runs; `compare` names the dominant one, and the parts' changes sum to the row's.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readResults } from "../../../src/core/results/files.ts";
import type { MockOptions } from "../../../src/mock/index.ts";
import type { LevelResult } from "../../../src/schema/v1.ts";
import { ROOT, runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-why-"));
const mocks: MockProcess[] = [];
afterAll(async () => {
  for (const m of mocks) await m.close();
});

/**
 * The suite's other files load this 2-core machine beside these sweeps (a head read 21.6 ms late
 * once, over the client-bound rule's 20 ms floor, and its rows went unjudged): a floor of 60 ms, as
 * the validity suite uses, keeps them judged; the client's own part is measured and said apart.
 * Each change the server makes is some 150 ms or more, past what such a machine's late reads add
 * to one side (a 40 ms change was outweighed by them beside six busy loops).
 */
const FLOOR = ["--client-late-floor-ms", "60"];

/** 20 ms to first token, 16 tokens at 5 ms: a call holds its slot about 95 ms. */
const BASE: Partial<MockOptions> = { flavor: "llamacpp", ttftMs: 20, itlMs: 5, capacity: 4 };

async function sweep(
  name: string,
  mock: Partial<MockOptions>,
  extra: string[] = [],
  nodeArgs: string[] = [],
) {
  const m = await startMock({ ...BASE, ...mock });
  mocks.push(m);
  const out = join(dir, `${name}.json`);
  const r = await runCli(
    [
      ...`sweep --levels 4 --requests 96 --max-tokens 16 --prompt-tokens 256 --metrics-interval-ms 0 --calibrate-prompts false --out ${out} --base-url ${m.url}`.split(
        " ",
      ),
      ...(extra.includes(FLOOR[0]!) ? [] : FLOOR),
      ...extra,
    ],
    { timeoutMs: 90_000, nodeArgs },
  );
  expect(r.code, r.stderr).toBe(0);
  // how late the mock's own timers fired (a busy machine's): its phases' times carry that much
  const mockLateMs = (await m.stats()).lateness.max ?? 0;
  await m.close();
  return { out, level: readResults(out).doc.levels[0]!, mockLateMs };
}

async function compare(base: string, head: string) {
  const r = await runCli(["compare", base, head], { timeoutMs: 60_000 });
  expect([0, 1]).toContain(r.code);
  return r.stdout;
}

/** The TTFT p95 line under "Why TTFT moved", and its figures. */
function why(stdout: string) {
  const line = stdout.split("\n").find((l) => l.startsWith("- TTFT p95 at c=4 "));
  expect(line, stdout).toBeDefined();
  const num = (s: string) => Number(s.replace("−", "-").replace("±", ""));
  const total = num(/^- TTFT p95 at c=4 ([+−][\d.]+) ms/.exec(line!)![1]!);
  const parts = Object.fromEntries(
    [...line!.matchAll(/(queue|prefill|client|rest) ([+−±][\d.]+)/g)].map((m) => [m[1]!, num(m[2]!)]),
  );
  return { line: line!, total, parts };
}

const parts = (l: LevelResult) => l.ttft_split!.p95;

describe("why TTFT moved", () => {
  it("half the slots for as many users: the queue part, and the parts sum to the change", async () => {
    const base = await sweep("slots-base", {});
    const head = await sweep("slots-head", { capacity: 2 });
    const w = why(await compare(base.out, head.out));
    // two calls wait a whole call (about 95 ms) at c=4 on 2 slots
    expect(w.total).toBeGreaterThan(50);
    expect(w.line).toMatch(/\(mostly queue\)$/);
    // the mock's prompt time is its first event's write less the admission: a late timer is in
    // it; the client's own late reads are their own part, apart from the server's
    const late = Math.max(base.mockLateMs, head.mockLateMs);
    expect(w.parts.queue!).toBeGreaterThan(0.8 * (w.total - Math.max(0, w.parts.client!)) - late);
    expect(Math.abs(w.parts.prefill!)).toBeLessThan(0.1 * w.total + late);
    // one run each side: each side's parts sum to its percentile, so no rest beyond rounding
    const sum = w.parts.queue! + w.parts.prefill! + w.parts.client! + (w.parts.rest ?? 0);
    expect(Math.abs(sum - w.total)).toBeLessThanOrEqual(0.2);
    expect(w.parts.rest ?? 0).toBe(0);
    // each side's parts are its own percentile's
    for (const l of [base.level, head.level]) {
      const p = parts(l);
      expect(p.queue_ms! + p.prefill_ms! + p.client_ms!).toBeCloseTo(l.ttft_ms.p95!, 6);
    }
  }, 120_000);

  it("a slower prefill: the prefill part", async () => {
    const base = await sweep("prefill-base", {});
    const head = await sweep("prefill-head", { ttftMs: 220 });
    const w = why(await compare(base.out, head.out));
    expect(w.total).toBeGreaterThan(150);
    expect(w.line).toMatch(/\(mostly prefill\)$/);
    expect(w.parts.prefill!).toBeGreaterThan(0.8 * (w.total - Math.max(0, w.parts.client!)));
    // the server's own prompt time is what the mock spent: 20 ms, then 220 (its timers never
    // fire early); the p95 band's parts are scaled to the p95 (its band's mean TTFT is at most
    // the level's max)
    for (const [l, ms] of [
      [base.level, 20],
      [head.level, 220],
    ] as const)
      expect(parts(l).prefill_ms!).toBeGreaterThanOrEqual((ms * l.ttft_ms.p95!) / l.ttft_ms.max! - 1e-9);
  }, 120_000);

  it("the prefix cache switched off: the prefill part, with the uncached tokens the server processed", async () => {
    const cached = ["--shared-prefix-tokens", "192"];
    const base = await sweep("cache-base", { prefillMsPer1k: 1000 }, cached);
    const head = await sweep("cache-head", { prefillMsPer1k: 1000, prefixCacheTokens: 0 }, cached);
    const w = why(await compare(base.out, head.out));
    expect(w.line).toMatch(/\(mostly prefill\)$/);
    // 192 of 256 prompt tokens from the cache, then none: about 192 ms more prefill at 1 ms a token
    expect(w.parts.prefill!).toBeGreaterThan(150);
    expect(parts(head.level).uncached_tokens! - parts(base.level).uncached_tokens!).toBeGreaterThan(150);
  }, 120_000);

  it("a slower decode: E2E's decode part, the server's own decode time per request", async () => {
    const base = await sweep("decode-base", {});
    const head = await sweep("decode-head", { itlMs: 25 });
    const out = await compare(base.out, head.out);
    const line = out.split("\n").find((l) => l.startsWith("- E2E p95 at c=4 "));
    expect(line, out).toMatch(
      /^- E2E p95 at c=4 \+[\d.]+ ms: queue [+−±][\d.]+, prefill [+−±][\d.]+, decode \+[\d.]+, client [+−±][\d.]+.*\(mostly decode\)$/,
    );
    for (const l of [base.level, head.level]) {
      const e = l.e2e_split!.p95;
      expect(e.queue_ms! + e.prefill_ms! + e.decode_ms! + e.client_ms!).toBeCloseTo(l.e2e_ms.p95!, 6);
    }
    // TPOT: the server's own per-token time moved, the client's did not
    const tpot = out.split("\n").find((l) => l.startsWith("- TPOT p50 at c=4 "));
    expect(tpot, out).toMatch(
      /^- TPOT p50 at c=4 \+[\d.]+ ms: decode \+[\d.]+, client [+−±][\d.]+.*\(mostly decode\)$/,
    );
    // 15 gaps of 5 ms, then of 25: the server's decode at the p50 about 300 ms more (a late
    // timer of the base's lengthens its decode by as much)
    expect(head.level.e2e_split!.p50.decode_ms! - base.level.e2e_split!.p50.decode_ms!).toBeGreaterThan(
      280 - base.mockLateMs,
    );
  }, 120_000);

  it("a client starved by its own work: the client part, where the server's parts stay", async () => {
    const base = await sweep("client-base", {});
    const busy = ["--import", join(ROOT, "test/helpers/busy-client.mjs")];
    const head = await sweep("client-head", {}, [], busy);
    const [b, h] = [parts(base.level), parts(head.level)];
    const moved = head.level.ttft_ms.p95! - base.level.ttft_ms.p95!;
    expect(moved).toBeGreaterThan(5);
    expect(h.client_ms! - b.client_ms!).toBeGreaterThan(Math.abs(h.prefill_ms! - b.prefill_ms!));
    expect(h.client_ms!).toBeGreaterThan(5 * Math.max(1, b.client_ms!));
  }, 120_000);
});

describe("why it moved, from the server's /metrics (vLLM's flavour: no timings in its streams)", () => {
  const VLLM = { flavor: "vllm" as const };
  // The server's histograms do not see the client's lateness, so a busy machine's late reads
  // (up to 100 ms here) must not leave these rows unjudged: the floor of the client-bound rule raised.
  const scraped = ["--metrics-interval-ms", "100", "--client-late-floor-ms", "100"];

  /** A row's line under "Why it moved", and its figures. */
  function means(stdout: string, label: string) {
    const line = stdout.split("\n").find((l) => l.startsWith(`- ${label} at c=4 `));
    expect(line, stdout).toBeDefined();
    const num = (x: string) => Number(x.replace("−", "-").replace("±", ""));
    const parts = Object.fromEntries(
      [...line!.matchAll(/(queue|prefill|decode|rest) ([+−±][\d.]+)/g)].map((m) => [m[1]!, num(m[2]!)]),
    );
    return { line: line!, parts };
  }

  it("half the slots: TTFT's change is in the server's mean queue, as its own histograms say", async () => {
    const base = await sweep("m-slots-base", VLLM, scraped);
    const head = await sweep("m-slots-head", { ...VLLM, capacity: 2 }, scraped);
    for (const l of [base.level, head.level]) {
      expect(l.ttft_split).toBeUndefined(); // nothing per request
      expect(l.server_means!.window).toBe("steady");
      expect(l.server_means!.requests).toBeGreaterThan(20);
    }
    // the mock's own record: 20 ms prefill, 15 × 5 ms decode; no queue on 4 slots for 4 users
    expect(base.level.server_means!.queue_ms!).toBeLessThan(5 + base.mockLateMs);
    expect(base.level.server_means!.prefill_ms!).toBeGreaterThanOrEqual(20);
    // decode as the mock timed it: its token clock keeps to schedule, so a late first token shortens it a little
    expect(base.level.server_means!.decode_ms!).toBeGreaterThan(0.9 * 75);
    // on 2 slots half the calls wait about a call (95 ms): a mean queue of about half that
    expect(head.level.server_means!.queue_ms!).toBeGreaterThan(25);
    const out = await compare(base.out, head.out);
    expect(out).toContain("the server's means: its own mean time per phase");
    const w = means(out, "TTFT p95");
    expect(w.line).toMatch(
      /; the server's means: queue \+[\d.]+, prefill [+−±][\d.]+(, rest [+−±][\d.]+)? \(mostly queue\)$/,
    );
    expect(Math.abs(w.parts.prefill!)).toBeLessThan(0.25 * w.parts.queue!);
    // the report's table of the server's means, the head's level as its document says
    const report = await runCli(["report", head.out], { timeoutMs: 60_000 });
    expect(report.code, report.stderr).toBe(0);
    const m = head.level.server_means!;
    expect(report.stdout).toContain("**The server's means**");
    expect(report.stdout).toContain(
      `| 4 | ${m.requests} | ${m.queue_ms!.toFixed(1)} | ${m.prefill_ms!.toFixed(1)} | ${m.decode_ms!.toFixed(1)} |`,
    );
  }, 120_000);

  it("a slower decode: E2E's change is in the server's mean decode, TTFT's parts stay", async () => {
    const base = await sweep("m-decode-base", VLLM, scraped);
    const head = await sweep("m-decode-head", { ...VLLM, itlMs: 25 }, scraped);
    // 15 gaps of 5 ms, then of 25 ms: about 300 ms more decode per request, as the server counts it
    const moved = head.level.server_means!.decode_ms! - base.level.server_means!.decode_ms!;
    expect(moved).toBeGreaterThan(280 - base.mockLateMs);
    const w = means(await compare(base.out, head.out), "E2E p95");
    expect(w.line).toMatch(/\(mostly decode\)$/);
    expect(w.parts.decode!).toBeGreaterThan(0.5 * (w.parts.decode! + Math.abs(w.parts.rest ?? 0)));
    expect(Math.abs(w.parts.queue!)).toBeLessThan(5 + Math.max(base.mockLateMs, head.mockLateMs));
  }, 120_000);
});
