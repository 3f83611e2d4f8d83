// Cache hygiene against the mock's prefix cache (its own record: usage.cached_tokens, computed
// from the blocks it holds): a dataset is consumed across levels without repeats, a reuse gets a
// unique tag ahead of it unless --dataset-reuse exact asks otherwise, and warmups (copies of the
// order's last entries) leave no hit on the prompts measured later.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { promptWords } from "../../../src/core/workload/prompts.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-cache-"));
const FILE = join(dir, "ten.jsonl");
// Ten prompts of 60 words, each its own sequence from its first word: they share no block.
writeFileSync(
  FILE,
  Array.from({ length: 10 }, (_, i) => JSON.stringify({ prompt: `p${i} ${promptWords(60, 1000 + i)}` })).join(
    "\n",
  ),
);
// Ten lines, each with its own 180-word system prompt, then a short user question: a warmup that
// kept the system prompt as it is would warm the measured line's first 180 words.
const SYSTEM_FILE = join(dir, "system.jsonl");
writeFileSync(
  SYSTEM_FILE,
  Array.from({ length: 10 }, (_, i) =>
    JSON.stringify({
      messages: [
        { role: "system", content: `s${i} ${promptWords(180, 2000 + i)}` },
        { role: "user", content: `q${i} ${promptWords(20, 3000 + i)}` },
      ],
    }),
  ).join("\n"),
);
const mocks: MockProcess[] = [];
afterAll(() => Promise.all(mocks.map((m) => m.close())));

/** A sweep against a mock of its own: its cache holds this run's prompts only. */
async function sweep(
  name: string,
  extra: string[],
  file = FILE,
  given: MockProcess | null = null,
): Promise<{ doc: ResultDocument; stderr: string }> {
  const mock = given ?? (await startMock({ ttftMs: 5, itlMs: 1, blockTokens: 4 }));
  if (!given) mocks.push(mock);
  const out = join(dir, `${name}.json`);
  const r = await runCli([
    "sweep",
    "--base-url",
    mock.url,
    "--dataset",
    file,
    "--levels",
    "1,2,3,4",
    "--requests",
    "4",
    "--warmup",
    "2",
    "--max-tokens",
    "4",
    "--metrics-interval-ms",
    "0",
    "--records",
    "inline",
    ...extra,
    "--out",
    out,
  ]);
  expect(r.code, r.stderr).toBe(0);
  return { doc: parseResultDocument(JSON.parse(readFileSync(out, "utf8"))), stderr: r.stderr };
}

describe("a dataset over 4 levels on a prefix cache", () => {
  it("no hit on a measured prompt: the file drawn in order across levels, reuses and warmups tagged", async () => {
    const { doc, stderr } = await sweep("tagged", []);
    const measured = doc.requests!.filter((r) => !r.warmup);
    expect(measured).toHaveLength(4 + 4 + 6 + 8); // closed loop: at least 2 x users per level
    for (const r of measured) expect(r.usage!.cached_tokens, `request ${r.id}`).toBe(0);
    // the first ten draws are the ten lines, the rest reuses with a tag
    expect(measured.filter((r) => r.prompt_reuse === undefined)).toHaveLength(10);
    expect(measured.filter((r) => r.prompt_reuse === "tagged")).toHaveLength(12);
    expect(stderr).toMatch(/prompts were reused .* each with a unique tag ahead of it/);
    for (const l of doc.levels) expect(l.cached_tokens_pct).toBe(0);
  });

  it("--dataset-reuse exact: the reused prompts are served from the cache, as asked", async () => {
    const { doc, stderr } = await sweep("exact", ["--dataset-reuse", "exact"]);
    const reused = doc.requests!.filter((r) => r.prompt_reuse === "exact");
    expect(reused).toHaveLength(12);
    for (const r of reused)
      expect(r.usage!.cached_tokens!).toBeGreaterThanOrEqual(0.9 * r.usage!.prompt_tokens! - 4);
    const first = doc.requests!.filter((r) => !r.warmup && r.prompt_reuse === undefined);
    for (const r of first) expect(r.usage!.cached_tokens).toBe(0);
    expect(stderr).toMatch(/reused exactly/);
    expect(doc.config!.dataset_reuse).toBe("exact");
  });

  it("lines with a system prompt of their own: warmups share none of it, so no measured request finds it cached", async () => {
    // 2 warmups per level copy the order's last lines (9 and 8), which the third level then
    // measures (3 + 4 + 6 requests draw past all ten lines)
    const { doc } = await sweep(
      "system",
      ["--levels", "1,2,3", "--requests", "3", "--warmup", "2"],
      SYSTEM_FILE,
    );
    const warmups = doc.requests!.filter((r) => r.warmup);
    expect(warmups.length).toBeGreaterThanOrEqual(2);
    const measured = doc.requests!.filter((r) => !r.warmup);
    for (const r of measured) expect(r.usage!.cached_tokens, `request ${r.id}`).toBe(0);
    for (const l of doc.levels) expect(l.cached_tokens_pct).toBe(0);
  });

  it("the same dataset a second time against the same server: the warm cache is named, with the remedy", async () => {
    const mock = await startMock({ ttftMs: 5, itlMs: 1, blockTokens: 4 });
    mocks.push(mock);
    const first = await sweep("first", ["--levels", "1,2", "--requests", "4"], FILE, mock);
    for (const l of first.doc.levels)
      expect(
        l.validity!.reasons.map((r) => r.code),
        "the first run is cold",
      ).not.toContain("cache_unasked");
    const second = await sweep("second", ["--levels", "1,2", "--requests", "4"], FILE, mock);
    expect(second.stderr).toMatch(
      /cached tokens the workload did not ask for: .*\(an earlier run of the same prompts\?\): restart the server or reset its prefix cache/,
    );
    const l = second.doc.levels[0]!;
    expect(l.cached_tokens_pct!).toBeGreaterThan(80);
    expect(l.validity!.reasons).toContainEqual(expect.objectContaining({ code: "cache_unasked" }));
  });
});

describe("--cache-reset: the server's own reset, found from what it serves", () => {
  it.each([
    ["vllm", "vllm_reset_prefix_cache"],
    ["sglang", "sglang_flush_cache"],
    ["llamacpp", "llamacpp_erase_slots"],
  ] as const)(
    "%s: a second run with --cache-reset sweep starts cold (%s), as the first did",
    async (flavor, method) => {
      const mock = await startMock({ ttftMs: 5, itlMs: 1, blockTokens: 4, flavor });
      mocks.push(mock);
      await sweep(`${flavor}-first`, ["--levels", "1,2", "--requests", "4"], FILE, mock);
      const second = await sweep(
        `${flavor}-reset`,
        ["--levels", "1,2", "--requests", "4", "--cache-reset", "sweep"],
        FILE,
        mock,
      );
      expect(second.doc.config!.cache_reset).toEqual({ mode: "sweep", method });
      expect(second.stderr).toMatch(/notice: cache reset: .* once, before the first level/);
      // (SGLang's usage names cached tokens only when there are some: none named is none cached)
      for (const r of second.doc.requests!.filter((x) => !x.warmup))
        expect(r.usage!.cached_tokens ?? 0, `request ${r.id}`).toBe(0);
      for (const l of second.doc.levels)
        expect(l.validity!.reasons.map((x) => x.code)).not.toContain("cache_unasked");
    },
  );

  it("level: exact reuses of the dataset find nothing of an earlier level cached; without it they are served warm", async () => {
    const warm = await sweep("exact-warm", ["--dataset-reuse", "exact"]);
    const cold = await sweep("exact-cold", ["--dataset-reuse", "exact", "--cache-reset", "level"]);
    const reused = (d: ResultDocument) => d.requests!.filter((r) => r.prompt_reuse === "exact");
    expect(reused(warm.doc).some((r) => r.usage!.cached_tokens! > 0)).toBe(true);
    expect(reused(cold.doc)).toHaveLength(12);
    // no level sends a line twice (at most 8 draws of 10 lines), so with a reset before each none is cached
    for (const r of cold.doc.requests!.filter((x) => !x.warmup))
      expect(r.usage!.cached_tokens, `request ${r.id}`).toBe(0);
    expect(cold.doc.config!.cache_reset).toEqual({ mode: "level", method: "vllm_reset_prefix_cache" });
    // another workload than the warm one: compared with it, nothing is judged
    expect(cold.doc.workload_fingerprint).not.toBe(warm.doc.workload_fingerprint);
  });

  it("refused before any load: a server with no reset (exit 1, cache_reset_unsupported), a reset per level with --shard (exit 2)", async () => {
    const plain = await startMock({ ttftMs: 5, itlMs: 1, flavor: "freetoken" });
    mocks.push(plain);
    const r = await runCli([
      "sweep",
      "--base-url",
      plain.url,
      "--levels",
      "1",
      "--cache-reset",
      "level",
      "--out",
      join(dir, "none.json"),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /error \[cache_reset_unsupported\]: .* has no cache reset tokenbench knows .*run without --cache-reset/,
    );
    expect((await plain.stats()).completed).toBeLessThanOrEqual(1); // the readiness probe at most
    const sharded = await runCli([
      "sweep",
      "--base-url",
      plain.url,
      "--levels",
      "1",
      "--cache-reset",
      "level",
      "--shard",
      "1/2",
      "--start-at",
      String(Date.now() + 600_000),
    ]);
    expect(sharded.code).toBe(2);
    expect(sharded.stderr).toMatch(/--cache-reset level with --shard: .*use --cache-reset sweep/);
  });
});
