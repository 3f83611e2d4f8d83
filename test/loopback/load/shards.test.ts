/**
 * Scaling out the load (#15) against the mock in its own process, the CLI in others:
 * worker threads and runner shards give the same per-level figures as one thread, within noise,
 * and exactly the union of the records; an open-loop schedule split over shards is still the
 * requested one; merge refuses what is not one run.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planLevel } from "../../../src/core/load/level-plan.ts";
import { readResults } from "../../../src/core/results/files.ts";
import { arrivalOffsetsMs } from "../../../src/core/workload/arrivals.ts";
import type { RequestRecord, ResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { expectReadOnTime } from "../../helpers/lateness.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";
import { toleranceFor } from "../../helpers/shard-tolerance.ts";

let mock: MockProcess;
const dir = mkdtempSync(join(tmpdir(), "tb-shards-"));
beforeAll(async () => {
  mock = await startMock({ ttftMs: 30, itlMs: 5, serverTimestamps: true });
});
afterAll(async () => {
  await mock?.close();
});

const common = (out: string) => [
  "sweep",
  "--base-url",
  mock.url,
  "--max-tokens",
  "12",
  "--warmup",
  "2",
  "--calibrate-prompts",
  "false",
  "--metrics-interval-ms",
  "0",
  "--records",
  "file",
  "--out",
  out,
];

async function sweep(name: string, args: string[]) {
  const out = join(dir, `${name}.json`);
  const r = await runCli([...common(out), ...args], { timeoutMs: 120_000 });
  expect(r.code, r.stderr).toBe(0);
  return { out, ...readResults(out) };
}

const measuredIds = (records: RequestRecord[]) =>
  records
    .filter((r) => !r.warmup)
    .map((r) => r.id)
    .sort((a, b) => a - b);

/**
 * The same levels and requests, each measured right: every level's events read within that
 * level's own measured lateness of the server's writes (the mock stamps them), so threads and
 * shards measure what one thread does, on a quiet machine or a busy one.
 */
function sameFigures(a: Run, b: Run) {
  expect(b.doc.levels.map((l) => [l.level, l.requests, l.ok])).toEqual(
    a.doc.levels.map((l) => [l.level, l.requests, l.ok]),
  );
  for (const run of [a, b])
    for (const l of run.doc.levels) {
      const recs = run.records.filter((r) => r.level === l.level && !r.warmup);
      // a merged run's levels carry each shard's check in client.shards; the level's bound is the worst
      expectReadOnTime(recs, l.client, `${run.out} level ${l.level}`);
    }
}
type Run = Awaited<ReturnType<typeof sweep>>;

describe("worker threads on one runner", () => {
  it("--workers 2 gives the figures of --workers 1 and exactly the same requests", async () => {
    const args = ["--levels", "1,4,8", "--requests", "24"];
    const one = await sweep("threads-1", [...args, "--workers", "1"]);
    const two = await sweep("threads-2", [...args, "--workers", "2"]);
    sameFigures(one, two);
    expect(two.doc.load_generator).toEqual({ workers: 2, shard: null, start_at_epoch_ms: null });
    // every level's requests: ids level * 10^7 + 0..23, once each
    for (const [li, l] of two.doc.levels.entries()) {
      const ids = measuredIds(two.records.filter((r) => r.level === l.level));
      expect(ids).toEqual(Array.from({ length: 24 }, (_, j) => li * 10_000_000 + j));
    }
    // the self-check reports each thread; level 1 has one user, so one thread
    expect(two.doc.levels[0]!.client.shards?.map((s) => s.thread)).toEqual(["1/1"]);
    const l8 = two.doc.levels[2]!.client.shards!;
    expect(l8.map((s) => s.thread)).toEqual(["1/2", "2/2"]);
    expect(l8.map((s) => s.requests)).toEqual([12, 12]); // the 24 measured requests, half each
    // one clock across threads: every record's times are on the run's timeline, in order
    for (const r of two.records) {
      expect(r.send_ms).toBeGreaterThan(0);
      expect(r.first_token_ms! - r.send_ms).toBeGreaterThan(30 - 0.5); // the mock's TTFT, at least
    }
  }, 180_000);
});

describe("shards across runners, merged", () => {
  let shard1: Awaited<ReturnType<typeof sweep>>;
  let shard2: Awaited<ReturnType<typeof sweep>>;
  const closedArgs = ["--levels", "2,6", "--requests", "18", "--level-slot-s", "4"];

  it("two --shard runs merged: the single run's figures and exactly the union of its requests", async () => {
    const single = await sweep("single", ["--levels", "2,6", "--requests", "18", "--workers", "1"]);
    const startAt = Date.now() + 5000;
    const both = ["1/2", "2/2"].map((s, i) =>
      sweep(`shard-${i + 1}`, [...closedArgs, "--workers", "1", "--shard", s, "--start-at", String(startAt)]),
    );
    const done = await Promise.all(both);
    shard1 = done[0]!;
    shard2 = done[1]!;
    expect(shard1.doc.load_generator?.shard).toBe("1/2");
    expect(shard1.doc.levels.map((l) => l.requests)).toEqual([9, 9]);
    const out = join(dir, "merged.json");
    const m = await runCli([
      "merge",
      shard2.out,
      shard1.out,
      "--out",
      out,
      "--records",
      "file",
      "--clock-tolerance-ms",
      toleranceFor(shard1, shard2),
    ]);
    expect(m.code, m.stderr).toBe(0);
    const merged = readResults(out);
    expect(merged.doc.load_generator?.merged_from).toEqual([shard1.out, shard2.out]);
    expect(measuredIds(merged.records)).toEqual(
      [...measuredIds(shard1.records), ...measuredIds(shard2.records)].sort((a, b) => a - b),
    );
    for (const [li] of merged.doc.levels.entries())
      expect(measuredIds(merged.records.filter((r) => r.level === merged.doc.levels[li]!.level))).toEqual(
        Array.from({ length: 18 }, (_, j) => li * 10_000_000 + j),
      );
    sameFigures(single, { out, ...merged });
    // the shards started each level together: their first sends lie within a few ms
    for (let li = 0; li < 2; li++) {
      const starts = [shard1, shard2].map(
        (s) => Date.parse(s.doc.clock.origin_wall_time) + s.doc.levels[li]!.started_at_ms,
      );
      // both wake at the slot; each as late as its own records say (its loop's stalls, its notice
      // of a start after its slot): the tolerance the merge was given
      expect(Math.abs(starts[0]! - starts[1]!)).toBeLessThan(Number(toleranceFor(shard1, shard2)));
    }
  }, 180_000);

  it("a shard that misses its start slot says so when it runs: how late, and the margin that would have been enough", async () => {
    const past = Date.now() - 3000;
    const out = join(dir, "late.json");
    const r = await runCli(
      [
        ...common(out),
        "--levels",
        "2,4",
        "--requests",
        "4",
        "--shard",
        "1/2",
        "--start-at",
        String(past),
        "--level-slot-s",
        "1",
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const first =
      /level 2: this shard started (\d+) ms after its slot \(--start-at\): .*A --start-at at least (\d+) s later would have been enough/.exec(
        r.stderr,
      );
    expect(first, r.stderr).not.toBeNull();
    expect(Number(first![1])).toBeGreaterThanOrEqual(3000);
    expect(Number(first![2]) * 1000).toBeGreaterThan(Number(first![1])); // the margin covers the lateness
    expect(r.stderr).toMatch(
      /level 4: this shard started \d+ ms after its slot \(--start-at \+ 1 x --level-slot-s\): the level before ran past its slot; .*A --level-slot-s of at least \d+ s would have been enough/,
    );
    // and it stays in the document, where merge and a reviewer find it
    const { doc } = readResults(out);
    expect(doc.levels.map((l) => l.notices.some((n) => n.includes("after its slot")))).toEqual([true, true]);
  }, 120_000);

  it("merge refuses what is not one run: a missing or doubled shard, another workload, clocks apart", async () => {
    const out = join(dir, "refused.json");
    const refuse = async (files: string[], pattern: RegExp) => {
      const r = await runCli(["merge", ...files, "--out", out]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/\[merge_refused\]/);
      expect(r.stderr).toMatch(pattern);
    };
    await refuse([shard1.out, shard1.out], /shard 1\/2 is given twice/);
    const edited = (name: string, edit: (d: ResultDocument) => void) => {
      const d = JSON.parse(readFileSync(shard2.out, "utf8")) as ResultDocument;
      edit(d);
      const p = join(dir, `${name}.json`);
      writeFileSync(p, JSON.stringify({ ...d, requests_file: `shard-2.requests.jsonl` }));
      return p;
    };
    await refuse(
      [shard1.out, edited("other-workload", (d) => (d.config!.max_tokens = 99))],
      /measured a different workload .*config differs: max_tokens/,
    );
    await refuse(
      [shard1.out, edited("three", (d) => (d.load_generator!.shard = "2/3"))],
      /shards of different splits/,
    );
    await refuse(
      [
        shard1.out,
        edited("late", (d) => {
          d.clock.origin_wall_time = new Date(Date.parse(d.clock.origin_wall_time) + 400).toISOString();
        }),
      ],
      /level 2 started \d+ ms apart on the shards \(tolerance 50 ms\)/,
    );
    const single = join(dir, "single.json");
    await refuse([single, shard1.out], /single\.json is not a shard/);
  }, 60_000);

  it("an open-loop schedule split over shards is still the requested one", async () => {
    const args = ["--mode", "open", "--levels", "40", "--requests", "40", "--seed", "7"];
    const startAt = Date.now() + 5000;
    const [a, b] = await Promise.all(
      ["1/2", "2/2"].map((s, i) =>
        sweep(`open-${i + 1}`, [...args, "--workers", "1", "--shard", s, "--start-at", String(startAt)]),
      ),
    );
    const out = join(dir, "open-merged.json");
    const m = await runCli([
      "merge",
      a!.out,
      b!.out,
      "--out",
      out,
      "--clock-tolerance-ms",
      toleranceFor(a!, b!),
    ]);
    expect(m.code, m.stderr).toBe(0);
    const merged = readResults(out);
    const measured = merged.records.filter((r) => !r.warmup).sort((x, y) => x.id - y.id);
    expect(measured.map((r) => r.id)).toEqual(Array.from({ length: 40 }, (_, j) => j));
    // the union's intended send times are the single-process schedule (offsets from its start)
    const plan = planLevel(merged.doc.config!, 0);
    const want = arrivalOffsetsMs({
      kind: "poisson",
      rateRps: 40,
      burstiness: 1,
      seed: plan.seed,
      count: 40,
    });
    // each shard's schedule runs from its own start: the union is the schedule where the shards
    // started together, off by as much as their starts were apart (their records say how far)
    const t0 = measured[0]!.intended_send_ms!;
    const got = measured.map((r) => r.intended_send_ms! - t0);
    const startOf = (x: typeof a) =>
      Date.parse(x!.doc.clock.origin_wall_time) + x!.doc.levels[0]!.started_at_ms;
    const apart = Math.abs(startOf(a) - startOf(b));
    for (let j = 0; j < 40; j++) expect(Math.abs(got[j]! - (want[j]! - want[0]!))).toBeLessThan(5 + apart);
    // and each shard sent its own half of it
    expect(a!.records.filter((r) => !r.warmup).length).toBe(20);
  }, 120_000);
});
