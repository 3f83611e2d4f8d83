// Against a real inference server: llama.cpp's llama-server (built by `npm run real-server`,
// 4 slots, 1 thread, a tiny random-weight model). Every figure is checked against what the
// server itself reports: its per-request `timings` and its /metrics gauges.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL_ALIAS, type RealServer, startRealServer } from "../../scripts/real-server/index.ts";
import { promptWords } from "../../src/core/workload/prompts.ts";
import { parseResultDocument, type RequestRecord, type ResultDocument } from "../../src/schema/v1.ts";
import { runCli } from "../helpers/cli.ts";
import { client, spec } from "../helpers/servers.ts";

const tmp = mkdtempSync(join(tmpdir(), "tokenbench-real-"));
const tolerance = (n: number) => Math.max(4, Math.ceil(0.005 * n));
let server: RealServer;
const read = (p: string): ResultDocument => parseResultDocument(JSON.parse(readFileSync(p, "utf8")));
const timing = (r: RequestRecord, k: string) => r.server_timings?.[k] as number;
/** Run the CLI against the server, results to `out`. */
const tb = (args: string, out: string, timeoutMs: number) =>
  runCli([...args.split(" "), "--base-url", server.url, "--out", out], { timeoutMs });

beforeAll(async () => {
  server = await startRealServer({ slots: 4 });
}, 120_000);
afterAll(() => server?.stop());

describe("tokenbench against llama.cpp's llama-server", () => {
  let doc: ResultDocument;
  beforeAll(async () => {
    const out = join(tmp, "sweep.json");
    const r = await tb(
      `sweep --levels 1,2,4,8 --requests 64 --max-tokens 64 --prompt-tokens 128 --metrics-interval-ms 50`,
      out,
      240_000,
    );
    expect(r.code, r.stderr).toBe(0);
    doc = read(out);
  }, 300_000);

  it("loses no request: every level complete, 0 errors", () => {
    expect(doc.complete).toBe(true);
    for (const l of doc.levels)
      expect({ level: l.level, errors: l.errors, ok: l.ok }).toEqual({ level: l.level, errors: 0, ok: 64 });
  });

  it("decode time per token agrees with the server's own timings within 2 %", () => {
    for (const l of doc.levels) {
      const rs = doc.requests!.filter((r) => r.level === l.level && !r.warmup);
      const client =
        rs.reduce((a, r) => a + (r.last_token_ms! - r.first_token_ms!), 0) /
        rs.reduce((a, r) => a + r.usage!.completion_tokens! - 1, 0);
      const own =
        rs.reduce((a, r) => a + timing(r, "predicted_ms"), 0) /
        rs.reduce((a, r) => a + timing(r, "predicted_n") - 1, 0);
      expect(
        Math.abs(client / own - 1),
        `level ${l.level}: client ${client} vs server ${own} ms/token`,
      ).toBeLessThan(0.02);
    }
  });

  it("TTFT is never below the server's prompt time; cached tokens equal the server's cache_n", () => {
    for (const r of doc.requests!.filter((x) => x.error === null)) {
      expect(r.first_token_ms! - r.send_ms).toBeGreaterThanOrEqual(timing(r, "prompt_ms"));
      expect(r.usage!.cached_tokens).toBe(timing(r, "cache_n"));
    }
  });

  it("prompts are the size asked, as the server counts them (chat template included)", () => {
    expect(doc.prompt_calibration!.within_tolerance).toBe(true);
    for (const r of doc.requests!.filter((x) => x.error === null))
      expect(
        Math.abs(r.usage!.prompt_tokens! - 128),
        `prompt_tokens ${r.usage!.prompt_tokens}`,
      ).toBeLessThanOrEqual(tolerance(128));
    // unique prompts share only the template's prefix, which the server reports as cached
    const shared = doc.levels[0]!.cached_tokens!;
    expect(shared.p50).toBeGreaterThan(0);
    expect(shared.max).toBeLessThan(0.2 * 128);
  });

  it("8 users on 4 slots: 4 admitted, the rest queued (the server's /metrics)", () => {
    // what the real-server script says it started is what the server reports (its /props)
    expect(server.slots).toBe(4);
    const l8 = doc.levels.find((l) => l.level === 8)!;
    expect(l8.admission!.admitted_concurrency_max).toBe(4);
    expect(l8.admission!.queued_requests_max).toBeGreaterThanOrEqual(1);
    const l2 = doc.levels.find((l) => l.level === 2)!;
    expect(l2.admission!.queued_requests_max ?? 0).toBe(0);
  });

  it("the TTFT and E2E split: prefill and decode parts are the server's own times; 8 users on 4 slots wait for a slot most of their TTFT p95", () => {
    for (const l of doc.levels) {
      const s = l.ttft_split!;
      expect(s.source).toBe("server_timings");
      for (const q of ["p50", "p95"] as const)
        expect(s[q].queue_ms! + s[q].prefill_ms! + s[q].client_ms!).toBeCloseTo(l.ttft_ms[q]!, 6);
    }
    for (const level of [1, 2]) {
      // no queue: the p50 band's prefill is the server's median prompt time, as its timings say
      const l = doc.levels.find((x) => x.level === level)!;
      const own = doc
        .requests!.filter((r) => r.level === level && !r.warmup)
        .map((r) => timing(r, "prompt_ms"))
        .sort((a, b) => a - b);
      const median = own[Math.floor(own.length / 2)]!;
      expect(Math.abs(l.ttft_split!.p50.prefill_ms! - median), `level ${level}`).toBeLessThanOrEqual(
        Math.max(2, 0.25 * median),
      );
    }
    for (const level of [1, 2]) {
      // the E2E split's decode part at p50 is the server's own decode time (its predicted_ms)
      const l = doc.levels.find((x) => x.level === level)!;
      const own = doc
        .requests!.filter((r) => r.level === level && !r.warmup)
        .map((r) => timing(r, "predicted_ms"))
        .sort((a, b) => a - b);
      const median = own[Math.floor(own.length / 2)]!;
      const e = l.e2e_split!.p50;
      expect(Math.abs(e.decode_ms! - median), `level ${level}`).toBeLessThanOrEqual(
        Math.max(2, 0.25 * median),
      );
      expect(e.queue_ms! + e.prefill_ms! + e.decode_ms! + e.client_ms!).toBeCloseTo(l.e2e_ms.p50!, 6);
      // TPOT's decode part: the server's own time per output token after the first
      const perToken = doc
        .requests!.filter((r) => r.level === level && !r.warmup && (r.usage?.completion_tokens ?? 0) > 1)
        .map((r) => timing(r, "predicted_ms") / (r.usage!.completion_tokens! - 1))
        .sort((a, b) => a - b);
      const mid = perToken[Math.floor(perToken.length / 2)]!;
      const t = l.tpot_split!.p50;
      expect(Math.abs(t.decode_ms! - mid), `level ${level}`).toBeLessThanOrEqual(Math.max(0.5, 0.25 * mid));
      expect(t.decode_ms! + t.client_ms!).toBeCloseTo(l.tpot_ms.p50!, 6);
    }
    const l8 = doc.levels.find((l) => l.level === 8)!.ttft_split!.p95;
    const ttft8 = doc.levels.find((l) => l.level === 8)!.ttft_ms.p95!;
    expect(l8.queue_ms!, JSON.stringify(l8)).toBeGreaterThan(0.5 * ttft8);
    expect(l8.queue_ms!).toBeGreaterThan(l8.prefill_ms!);
  });
});

describe("connections llama.cpp closes after every stream", () => {
  it("1,000 requests, none lost", async () => {
    const out = join(tmp, "thousand.json");
    const r = await tb(
      `sweep --levels 8 --requests 1000 --max-tokens 4 --prompt-tokens 32 --warmup 0 --metrics-interval-ms 0 --records inline`,
      out,
      240_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    expect(d.levels[0]!.requests).toBe(1000);
    expect(d.levels[0]!.errors_by_code).toEqual({});
    const resent = d.requests!.filter((x) => x.retries !== undefined).length;
    expect(resent).toBeLessThan(50);
  }, 300_000);
});

describe("first contact with llama.cpp", () => {
  it("a server that ignores model names: the served id is recorded, with a notice", async () => {
    const out = join(tmp, "named.json");
    const r = await tb(
      `sweep --model gpt-4o --levels 1 --requests 2 --max-tokens 4 --prompt-tokens 32 --warmup 0`,
      out,
      120_000,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`answers any model name.*"${MODEL_ALIAS}" is recorded`));
    expect(read(out).target.model).toBe(MODEL_ALIAS);
  }, 150_000);
});

describe("the profile against llama.cpp", () => {
  it("calibrated prefill sizes, cached tokens = cache_n, small_suffix adds --suffix-tokens", async () => {
    const out = join(tmp, "profile.json");
    const r = await tb(
      `profile --targets 128,256 --repetitions 2 --decode-tokens 32 --suffix-tokens 32`,
      out,
      240_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    const p = d.profile!;
    for (const t of p.calibration.targets) expect(t.within_tolerance, JSON.stringify(t)).toBe(true);
    expect(Math.abs(p.calibration.suffix_tokens! - 32)).toBeLessThanOrEqual(tolerance(32));
    for (const s of p.samples.filter((x) => x.phase === "prefill"))
      expect(Math.abs(s.prompt_tokens! - s.target_tokens!)).toBeLessThanOrEqual(tolerance(s.target_tokens!));
    const byPhase = (ph: string) => p.samples.filter((s) => s.phase === ph);
    for (const [i, s] of p.samples.entries()) {
      const rec = d.requests![i]!;
      if (s.error === null) expect(s.cached_tokens).toBe(timing(rec, "cache_n"));
    }
    const ident = byPhase("prefix_identical");
    const suffix = byPhase("prefix_small_suffix");
    for (let k = 0; k < suffix.length; k++) {
      expect(Math.abs(suffix[k]!.prompt_tokens! - ident[k]!.prompt_tokens! - 32)).toBeLessThanOrEqual(
        tolerance(32),
      );
      expect(ident[k]!.cached_tokens!).toBeGreaterThan(0.9 * ident[k]!.prompt_tokens!);
    }
  }, 300_000);
});

describe("real workloads against llama.cpp: its prompt cache sees the sharing", () => {
  it("shared prefixes: after the first request of a group, the prefix is served from the cache (cached = cache_n)", async () => {
    const out = join(tmp, "prefix.json");
    const r = await tb(
      `sweep --levels 1 --requests 8 --max-tokens 8 --prompt-tokens 64 --shared-prefix-tokens 256 --prefix-groups 2 --warmup 0 --metrics-interval-ms 0 --records inline`,
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    const rs = d.requests!.filter((x) => !x.warmup).sort((a, b) => a.id - b.id);
    for (const [i, x] of rs.entries()) {
      expect(x.error).toBeNull();
      expect(x.usage!.cached_tokens).toBe(timing(x, "cache_n"));
      // request i is in group i mod 2: from the third on, its group's prefix was sent before
      if (i >= 2) expect(x.usage!.cached_tokens!, `request ${i}`).toBeGreaterThanOrEqual(0.95 * 256);
    }
    expect(d.levels[0]!.cached_tokens_pct!).toBeGreaterThan(50);
  }, 200_000);

  it("multi-turn: each later turn finds the conversation so far in the cache (cached = cache_n)", async () => {
    const out = join(tmp, "turns.json");
    const r = await tb(
      `sweep --levels 1 --requests 6 --turns 3 --max-tokens 16 --prompt-tokens 96 --warmup 0 --metrics-interval-ms 0 --records inline`,
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    const rs = d.requests!.filter((x) => !x.warmup).sort((a, b) => a.id - b.id);
    expect(rs.map((x) => x.turn)).toEqual([1, 2, 3, 1, 2, 3]);
    for (const [i, x] of rs.entries()) {
      expect(x.error).toBeNull();
      expect(x.usage!.cached_tokens).toBe(timing(x, "cache_n"));
      if (x.turn! > 1) {
        const prev = rs[i - 1]!;
        // the history grew by the last answer and a new turn, and all of the last prompt was cached
        expect(x.usage!.prompt_tokens!).toBeGreaterThan(prev.usage!.prompt_tokens! + 96);
        expect(x.usage!.cached_tokens!, `turn ${x.turn}`).toBeGreaterThanOrEqual(
          0.9 * prev.usage!.prompt_tokens!,
        );
        // a first turn shares only the template's prefix and its tag's leading characters
      } else expect(x.usage!.cached_tokens!).toBeLessThan(0.3 * x.usage!.prompt_tokens!);
    }
    const turns = d.levels[0]!.turns!;
    expect(turns[2]!.cached_tokens_pct!).toBeGreaterThan(turns[0]!.cached_tokens_pct! + 40);
  }, 200_000);
});

describe("cache hygiene against llama.cpp's prompt cache", () => {
  it("a dataset over 4 levels: no measured prompt finds more than the template cached (cached = cache_n), warmups and reuses tagged", async () => {
    const file = join(tmp, "ten.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 10 }, (_, i) =>
        JSON.stringify({ prompt: `p${i} ${promptWords(80, 2000 + i)}` }),
      ).join("\n"),
    );
    const out = join(tmp, "hygiene.json");
    const r = await tb(
      `sweep --dataset ${file} --levels 1,2,3,4 --requests 4 --warmup 2 --max-tokens 8 --metrics-interval-ms 0 --records inline`,
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    const measured = d.requests!.filter((x) => !x.warmup);
    expect(measured.filter((x) => x.prompt_reuse === "tagged").length).toBeGreaterThan(0);
    for (const x of measured) {
      expect(x.error).toBeNull();
      expect(x.usage!.cached_tokens).toBe(timing(x, "cache_n"));
      // the template's prefix and a few characters the prompts' starts share: never the prompt
      expect(x.usage!.cached_tokens!, `request ${x.id}`).toBeLessThan(0.3 * x.usage!.prompt_tokens!);
    }
  }, 200_000);

  it("--cache-reset level: each level's first send of a prompt finds only the template cached (= cache_n), where without it a later level is warm; a server without --slot-save-path is refused", async () => {
    const file = join(tmp, "reuse.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 2 }, (_, i) =>
        JSON.stringify({ prompt: `r${i} ${promptWords(80, 6000 + i)}` }),
      ).join("\n"),
    );
    // two lines sent again at every level (and twice within level 2: 2 requests per user)
    const args = (reset: string) =>
      `sweep --dataset ${file} --dataset-reuse exact --levels 1,2 --requests 2 --warmup 0 --max-tokens 8 --metrics-interval-ms 0 --records inline${reset}`;
    // this suite's server was started without --slot-save-path: its erase is refused, before any load
    const refused = await tb(args(" --cache-reset level"), join(tmp, "refused.json"), 60_000);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /error \[cache_reset_failed\]: .*POST \/slots\/0\?action=erase: HTTP 501 .*--slot-save-path/,
    );
    // one slot per line, and no host-memory cache to restore an erased slot from
    const dir = mkdtempSync(join(tmpdir(), "tb-slots-"));
    const saving = await startRealServer({
      slots: 2,
      extraArgs: ["--slot-save-path", dir, "--cache-ram", "0"],
    });
    try {
      const run = async (name: string, reset: string) => {
        const out = join(tmp, `${name}.json`);
        const r = await runCli([...args(reset).split(" "), "--base-url", saving.url, "--out", out], {
          timeoutMs: 120_000,
        });
        expect(r.code, r.stderr).toBe(0);
        const measured = read(out).requests!.filter((x) => !x.warmup);
        // each level's first two sends, in the order drawn: its first send of each line
        return [1, 2].map((level) =>
          measured
            .filter((x) => x.level === level)
            .sort((a, b) => a.id - b.id)
            .slice(0, 2),
        );
      };
      const cold = await run("reuse-cold", " --cache-reset level");
      for (const x of cold.flat()) {
        expect(x.usage!.cached_tokens).toBe(timing(x, "cache_n"));
        expect(x.usage!.cached_tokens!, `request ${x.id}`).toBeLessThan(0.3 * x.usage!.prompt_tokens!);
      }
      const warm = await run("reuse-warm", "");
      for (const x of warm[1]!)
        expect(x.usage!.cached_tokens!, `request ${x.id}`).toBeGreaterThan(0.9 * x.usage!.prompt_tokens!);
    } finally {
      await saving.stop();
    }
  }, 240_000);

  it("--cancel-share 0.25: streams aborted after 4 tokens leave no slot busy (its /slots) within 2 s of each level", async () => {
    const out = join(tmp, "cancel.json");
    const r = await tb(
      "sweep --levels 1,4 --requests 16 --max-tokens 32 --prompt-tokens 64 --cancel-share 0.25 --cancel-after-tokens 4 --metrics-interval-ms 0 --records inline",
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    for (const l of d.levels) {
      expect(l.cancelled!.requests, `level ${l.level}`).toBeGreaterThan(0);
      expect(l.cancelled!.release).toMatchObject({ source: "slots", busy: 0 });
      expect(l.cancelled!.release!.freed_s!).toBeLessThan(2);
      expect(l.validity!.reasons.map((x) => x.code)).not.toContain("leak");
      // an idle request's TTFT after the level within the noise of the one before it
      const p = l.cancelled!.probe!;
      expect(p.before_ms!, `level ${l.level}`).toBeGreaterThan(0);
      expect(p.after_ms! - p.before_ms!, `level ${l.level}`).toBeLessThanOrEqual(p.bound_ms!);
      expect(l.ok + l.errors).toBe(l.requests);
    }
    // what /slots says now, from outside: nothing processing
    const slots = (await (await fetch(`${server.url}/slots`)).json()) as { is_processing: boolean }[];
    expect(slots.filter((s) => s.is_processing)).toEqual([]);
  }, 200_000);

  it("lines with a system prompt of their own: no measured request finds more than the template cached; a second run of the same file names the warm cache", async () => {
    const file = join(tmp, "system.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 10 }, (_, i) =>
        JSON.stringify({
          messages: [
            { role: "system", content: `s${i} ${promptWords(180, 4000 + i)}` },
            { role: "user", content: `q${i} ${promptWords(20, 5000 + i)}` },
          ],
        }),
      ).join("\n"),
    );
    const args = `sweep --dataset ${file} --levels 1,2,3 --requests 3 --warmup 2 --max-tokens 8 --metrics-interval-ms 0 --records inline`;
    const out = join(tmp, "system.json");
    const r = await tb(args, out, 180_000);
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    for (const x of d.requests!.filter((q) => !q.warmup)) {
      expect(x.error).toBeNull();
      expect(x.usage!.cached_tokens).toBe(timing(x, "cache_n"));
      // the chat template's opening and the first characters every system prompt starts with ("s"):
      // never the 180 words of a system prompt a warmup sent before
      expect(x.usage!.cached_tokens!, `request ${x.id}`).toBeLessThan(0.15 * x.usage!.prompt_tokens!);
    }
    // the same file again: the server holds what the first run sent, and the run says so
    const again = await tb(args, join(tmp, "system-again.json"), 180_000);
    expect(again.code, again.stderr).toBe(0);
    const warm = read(join(tmp, "system-again.json"));
    // llama.cpp keeps what the first run sent (its prompt cache in host memory)
    expect(warm.levels[0]!.cached_tokens_pct!).toBeGreaterThan(80);
    expect(again.stderr).toMatch(/cached tokens the workload did not ask for: .*reset its prefix cache/);
    expect(warm.levels[0]!.validity!.reasons).toContainEqual(
      expect.objectContaining({ code: "cache_unasked" }),
    );
  }, 400_000);
});

describe("every workload kind runs against llama.cpp", () => {
  const TRACE = join(import.meta.dirname, "../../examples/trace.jsonl");
  const DATASET = join(import.meta.dirname, "../../examples/dataset.jsonl");

  it("a trace: its times, its lengths as the server counts them, shared blocks from the cache (cached = cache_n)", async () => {
    const out = join(tmp, "trace.json");
    const r = await tb(
      `sweep --trace ${TRACE} --requests 16 --warmup 0 --metrics-interval-ms 0 --records inline`,
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    const rs = d.requests!.filter((x) => !x.warmup).sort((a, b) => a.id - b.id);
    expect(rs).toHaveLength(16);
    const shared: number[] = [];
    for (const x of rs) {
      expect(x.error).toBeNull();
      expect(x.usage!.cached_tokens).toBe(timing(x, "cache_n"));
      // sized by the calibration's rate per word (not counted one by one): within max(8, 1 %)
      expect(Math.abs(x.usage!.prompt_tokens! - x.prompt_tokens_requested!)).toBeLessThanOrEqual(
        Math.max(8, Math.ceil(0.01 * x.prompt_tokens_requested!)),
      );
      if (x.usage!.cached_tokens! >= 500) shared.push(x.id);
    }
    expect(shared.length, "requests that found a shared 512-token block cached").toBeGreaterThan(0);
    expect(d.levels[0]!.open_loop!.schedule_lag_ms.n).toBe(16);
  }, 200_000);

  it("a dataset with a ramp-up, and a short saturation search", async () => {
    const out = join(tmp, "dataset.json");
    const r = await tb(
      `sweep --dataset ${DATASET} --levels 2 --requests 8 --ramp-up-s 1 --max-tokens 16 --warmup 0 --metrics-interval-ms 0`,
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const l = read(out).levels[0]!;
    expect([l.ok, l.errors]).toEqual([8, 0]);
    expect(l.ramp_requests!).toBeGreaterThan(0);
    const so = join(tmp, "search.json");
    const s = await tb(
      `sweep --mode search --levels 2 --duration 2 --search-max-probes 4 --max-tokens 16 --prompt-tokens 64 --slo-ttft-ms 1000 --warmup 0 --metrics-interval-ms 0`,
      so,
      180_000,
    );
    expect(s.code, s.stderr).toBe(0);
    const doc = read(so);
    expect(doc.levels.length).toBeLessThanOrEqual(4);
    expect(doc.saturation!.probes).toBe(doc.levels.length);
    expect(s.stdout).toMatch(/sustains (at least )?[\d.]+ req\/s under SLO/);
  }, 200_000);
});

describe("streams as llama.cpp sends them: the Responses API and an inline think block", () => {
  it("a Responses API sweep agrees with the server's own decode timings as a chat sweep does", async () => {
    const out = join(tmp, "responses.json");
    const r = await tb(
      `sweep --api responses --levels 1,4 --requests 16 --max-tokens 48 --prompt-tokens 96 --warmup 1 --metrics-interval-ms 0 --records inline`,
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    expect(d.target.api).toBe("responses");
    for (const l of d.levels) {
      expect([l.ok, l.errors]).toEqual([16, 0]);
      const rs = d.requests!.filter((x) => x.level === l.level && !x.warmup);
      const client =
        rs.reduce((a, x) => a + (x.last_token_ms! - x.first_token_ms!), 0) /
        rs.reduce((a, x) => a + x.usage!.completion_tokens! - 1, 0);
      const own =
        rs.reduce((a, x) => a + timing(x, "predicted_ms"), 0) /
        rs.reduce((a, x) => a + timing(x, "predicted_n") - 1, 0);
      expect(Math.abs(client / own - 1), `level ${l.level}: ${client} vs ${own} ms/token`).toBeLessThan(0.02);
      for (const x of rs) {
        expect(x.usage!.completion_tokens).toBe(timing(x, "predicted_n"));
        expect(x.usage!.cached_tokens).toBe(timing(x, "cache_n"));
        expect(x.first_token_ms! - x.send_ms).toBeGreaterThanOrEqual(timing(x, "prompt_ms"));
      }
    }
  }, 200_000);

  it("a Messages API sweep (--api messages): decode agrees with the server's own counters, usage is the server's, count_tokens sizes the prompts", async () => {
    // One user at a time, so the server's /metrics counters over the run are the run's requests
    // plus the few 1-token probes the preflight sends (whose single token takes no decode time).
    const counters = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const get = (name: string) => Number(new RegExp(`^llamacpp:${name} (\\S+)$`, "m").exec(text)![1]);
      return { predicted: get("tokens_predicted_total"), predictedS: get("tokens_predicted_seconds_total") };
    };
    const before = await counters();
    const out = join(tmp, "messages.json");
    const r = await tb(
      `sweep --api messages --levels 1 --requests 16 --max-tokens 48 --prompt-tokens 96 --seed 41 --warmup 0 --metrics-interval-ms 0 --records inline`,
      out,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const after = await counters();
    const d = read(out);
    expect(d.target.api).toBe("messages");
    expect([d.levels[0]!.ok, d.levels[0]!.errors]).toEqual([16, 0]);
    const rs = d.requests!.filter((x) => !x.warmup);
    const completion = rs.reduce((a, x) => a + x.usage!.completion_tokens!, 0);
    // the server's count of generated tokens is the records' plus one per probe
    const probes = after.predicted - before.predicted - completion;
    expect(
      probes,
      `${after.predicted - before.predicted} generated, ${completion} in the records`,
    ).toBeGreaterThanOrEqual(0);
    expect(probes).toBeLessThanOrEqual(4);
    const client =
      rs.reduce((a, x) => a + (x.last_token_ms! - x.first_token_ms!), 0) / (completion - rs.length);
    const own = ((after.predictedS - before.predictedS) * 1000) / (completion - rs.length);
    expect(Math.abs(client / own - 1), `${client} vs ${own} ms/token`).toBeLessThan(0.02);
    expect(d.prompt_calibration!.method).toBe("count_tokens");
    expect(d.prompt_calibration!.within_tolerance).toBe(true);
    for (const x of rs) {
      expect(
        Math.abs(x.usage!.prompt_tokens! - 96),
        `prompt_tokens ${x.usage!.prompt_tokens}`,
      ).toBeLessThanOrEqual(tolerance(96));
      // the template's prefix, read from the cache (cache_read_input_tokens), never the whole prompt
      expect(x.usage!.cached_tokens).toBeGreaterThan(0);
      expect(x.usage!.cached_tokens).toBeLessThan(0.3 * 96);
    }
  }, 200_000);

  it("--reasoning-tags think: the forced think block's tokens are the server's, and the answer comes after", async () => {
    const out = join(tmp, "think.json");
    const grammar = 'root ::= "<think>" [a-z ]{10,20} "</think>" [a-z ]{10,20}';
    const r = await runCli(
      [
        "sweep",
        "--base-url",
        server.url,
        "--levels",
        "1",
        "--requests",
        "6",
        "--max-tokens",
        "96",
        "--ignore-eos=false",
        "--reasoning-tags",
        "think",
        "--extra-body",
        JSON.stringify({ grammar }),
        "--warmup",
        "0",
        "--metrics-interval-ms",
        "0",
        "--records",
        "inline",
        "--out",
        out,
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const d = read(out);
    const l = d.levels[0]!;
    expect(l.errors).toBe(0);
    expect(l.reasoning_tokens!.n).toBe(6);
    for (const x of d.requests!.filter((q) => !q.warmup)) {
      // llama.cpp streams one token per event: the events are the tokens the server generated,
      // but for the end-of-sequence token that ends the grammar (counted, never sent)
      expect(timing(x, "predicted_n") - x.event_times_ms.length).toBe(x.finish_reason === "stop" ? 1 : 0);
      expect(x.reasoning_tokens).toBe(x.reasoning_events);
      // the block: "<think>" and "</think>" (several tokens each here) and 10-20 letters
      expect(x.reasoning_tokens!).toBeGreaterThanOrEqual(4);
      expect(x.reasoning_tokens! + x.answer_tokens!).toBe(timing(x, "predicted_n"));
      expect(x.answer_tokens!).toBeGreaterThan(0);
      expect(x.first_answer_ms!).toBeGreaterThan(x.first_token_ms!);
      // the reasoning took the server's time for its tokens: inside its own decode time
      expect(x.first_answer_ms! - x.first_reasoning_ms!).toBeLessThanOrEqual(timing(x, "predicted_ms") + 5);
    }
    // Counted apart from the tag scanner: the server's tokens (one per event) whose text lies in
    // the block, by the answer's text and each event's size. (Not the tokenizer's count of the
    // block's text: under a grammar the server spells "<think>" in six tokens, its tokenizer in fewer.)
    const c = client(server.url, { reasoningTags: "think", ignoreEos: false, extraBody: { grammar } });
    const s = spec({ maxTokens: 96, keepText: true });
    const rec = await c.stream(s);
    await c.close();
    const block = /^\s*<think>[\s\S]*?<\/think>/.exec(s.responseText!)![0];
    let chars = 0;
    let inBlock = 0;
    while (chars < block.length) chars += rec.event_text_chars[inBlock++]!;
    expect(rec.reasoning_tokens, block).toBe(inBlock);
  }, 200_000);
});
