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
