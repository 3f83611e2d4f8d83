// The same seeded sweeps give the same documents, timings aside: what each request was (its id,
// level, prompt and output sizes, what the server answered), what each level counted, the
// configuration, formulas and fingerprints. Held against committed goldens, so a change to how a
// run is sequenced (sweep/) cannot quietly change what it sends or records.
// UPDATE_GOLDEN=1 npx vitest run test/loopback/sweep/golden.test.ts rewrites them.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const GOLDEN = resolve(import.meta.dirname, "../../fixtures/golden");
const dir = mkdtempSync(join(tmpdir(), "tb-golden-"));
let mock: MockProcess;
beforeAll(async () => {
  mock = await startMock({ ttftMs: 5, itlMs: 1, seed: 3, meanOutputTokens: 6 });
});
afterAll(() => mock.close());

/** What a document says apart from its timings (and the mock's port). */
function structure(doc: ResultDocument) {
  const stats = (s: { n: number } | undefined) => s?.n ?? null;
  return {
    kind: doc.kind,
    tool: doc.tool.name,
    formulas: doc.formulas,
    config: doc.config,
    workload_fingerprint: doc.workload_fingerprint,
    prompt_calibration: doc.prompt_calibration ?? null,
    complete: doc.complete,
    repeats: doc.repeats?.map((r) => ({ index: r.index, levels: r.levels.map((l) => l.level) })) ?? null,
    levels: doc.levels.map((l) => ({
      level: l.level,
      mode: l.mode,
      concurrency: l.concurrency,
      requests: l.requests,
      ok: l.ok,
      errors: l.errors,
      errors_by_code: l.errors_by_code,
      warmup_requests: l.warmup_requests,
      prompt_tokens_total: l.prompt_tokens_total,
      completion_tokens_total: l.completion_tokens_total,
      // (decode_tok_s's n is not here: a request whose tokens arrive in one read has no decode span)
      n: [stats(l.ttft_ms), stats(l.itl_ms), stats(l.tpot_ms), stats(l.e2e_ms)],
      usage_chunk_mismatches: l.usage_chunk_mismatches,
      finish_reasons: l.finish_reasons ?? null,
      target_rate_rps: l.open_loop?.target_rate_rps ?? null,
      arrival: l.open_loop?.arrival ?? null,
    })),
    // In id order (records are kept in the order they ended); the mock's text per event is its own.
    requests: [...(doc.requests ?? [])]
      .sort((a, b) => a.id - b.id)
      .map((r) => ({
        id: r.id,
        level: r.level,
        warmup: r.warmup,
        open: r.intended_send_ms !== null,
        prompt_tokens_requested: r.prompt_tokens_requested,
        max_tokens: r.max_tokens,
        usage: r.usage,
        finish_reason: r.finish_reason,
        http_status: r.http_status,
        error: r.error?.code ?? null,
        events: r.event_times_ms.length,
        repeat: r.repeat ?? null,
        // which conversation a later turn joins depends on which user's answer came first
        session: r.session === undefined ? null : r.session === r.id ? "its own" : "an earlier turn's",
        turn: r.turn ?? null,
      })),
  };
}

const CASES: [string, string[]][] = [
  ["closed", ["--levels", "1,3", "--requests", "8", "--warmup", "2", "--max-tokens", "5"]],
  [
    "open",
    ["--mode", "open", "--levels", "20,40", "--requests", "12", "--max-tokens", "4", "--arrival", "constant"],
  ],
  ["repeats", ["--levels", "2", "--requests", "6", "--repeats", "2", "--max-tokens", "3"]],
  ["turns", ["--levels", "2", "--requests", "6", "--turns", "2", "--max-tokens", "3"]],
];

describe("a seeded sweep's document, timings aside, is the golden one", () => {
  for (const [name, args] of CASES)
    it(name, { timeout: 60_000 }, async () => {
      const out = join(dir, `${name}.json`);
      const r = await runCli([
        "sweep",
        ...["--base-url", mock.url, "--seed", "11", "--quiet", "--out", out, "--records", "inline"],
        ...args,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const got = structure(JSON.parse(readFileSync(out, "utf8")) as ResultDocument);
      const file = join(GOLDEN, `${name}.json`);
      if (process.env.UPDATE_GOLDEN === "1") writeFileSync(file, `${JSON.stringify(got, null, 1)}\n`);
      expect(existsSync(file), `${file} is missing: UPDATE_GOLDEN=1 writes it`).toBe(true);
      expect(got).toEqual(JSON.parse(readFileSync(file, "utf8")));
    });
});
