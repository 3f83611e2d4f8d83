/**
 * The hostile corpus for the harness (#11): a misbehaving server in its own process
 * (test/helpers/hostile-server.mjs) and the CLI in another. Each case asserts the exact outcome:
 * the error code on the requests, the exit code, what was written, and a time bound.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { runCli, spawnCli } from "../../helpers/cli.ts";
import { startHostileServer } from "../../helpers/hostile-process.ts";

let server: Awaited<ReturnType<typeof startHostileServer>>;
let root: string;
const dir = mkdtempSync(join(tmpdir(), "tb-hostile-"));

beforeAll(async () => {
  server = await startHostileServer();
  root = server.root;
});
afterAll(() => {
  server?.stop();
});

const stats = async (): Promise<Record<string, number>> => (await fetch(`${root}/stats/`)).json();

/** A small sweep of `behaviour` (a path prefix on the hostile server), timed. */
async function sweep(behaviour: string, extra: string[] = [], timeoutMs = 60_000) {
  const out = join(dir, `${behaviour}-${Math.random().toString(16).slice(2)}.json`);
  const t0 = performance.now();
  const r = await runCli(
    [
      "sweep",
      "--base-url",
      `${root}/${behaviour}`,
      "--model",
      "hostile",
      "--levels",
      "1",
      "--requests",
      "3",
      "--warmup",
      "0",
      "--metrics-interval-ms",
      "0",
      "--calibrate-prompts",
      "false",
      "--timeout-s",
      "20",
      "--out",
      out,
      ...extra,
    ],
    { timeoutMs },
  );
  const seconds = (performance.now() - t0) / 1000;
  const doc: ResultDocument | null = existsSync(out)
    ? parseResultDocument(JSON.parse(readFileSync(out, "utf8")))
    : null;
  return { ...r, seconds, doc, out };
}

describe("every wait has a deadline", () => {
  it("a /health that trickles one byte at a time: not ready, promptly", async () => {
    const r = await sweep("trickle-health", ["--ready-timeout-s", "2"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/not ready after 2 s/);
    expect(r.stderr).toMatch(/deadline: no complete answer within 5\.0 s/);
    expect(r.seconds).toBeLessThan(20);
    expect(r.doc).toBeNull();
  });
  it("a /v1/models that trickles: the snapshot gives up on it, the sweep runs", async () => {
    const r = await sweep("trickle-models");
    expect(r.code, r.stderr).toBe(0);
    expect(r.doc!.levels[0]!.ok).toBe(3);
    expect(r.doc!.server!.endpoints["/v1/models"]!.present).toBe(false);
    expect(r.seconds).toBeLessThan(40);
  }, 90_000); // above its own bound: the figure decides, not the runner's timeout
  it("a /metrics that trickles, sampled during the level: the sweep still ends", async () => {
    const r = await sweep("trickle-metrics", ["--metrics-interval-ms", "200"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.doc!.levels[0]!.ok).toBe(3);
    expect(r.seconds).toBeLessThan(60);
  }, 90_000);
});

describe("a misbehaving stream is recorded on its request with its own code; the run goes on", () => {
  const cases: [string, string][] = [
    ["endless", "response_too_large"],
    ["long-line", "line_too_long"],
    ["fractional", "invalid_usage"],
    ["negative", "invalid_usage"],
    ["gzip", "unsupported_encoding"],
    ["close-mid", "connection_reset"],
    ["bare-json-error", "server_error_event"],
    ["comments-only", "missing_done"],
    ["redirect", "http_error"],
    ["zero-tokens", "empty_stream"],
  ];
  for (const [behaviour, code] of cases) {
    it(`${behaviour} -> ${code}`, async () => {
      const r = await sweep(behaviour, [], 120_000);
      // Every request failed, so the run exits 1 (--max-error-rate), with everything written.
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/more than 5% of requests failed/);
      const level = r.doc!.levels[0]!;
      expect(level.errors_by_code).toEqual({ [code]: 3 });
      const { records } = await import("../../../src/core/results/files.ts").then((m) =>
        m.readResults(r.out),
      );
      expect(records.filter((x) => !x.warmup).map((x) => x.error?.code)).toEqual([code, code, code]);
      expect(r.seconds).toBeLessThan(60);
    }, 130_000);
  }
  it("the server's own words reach the record: a bare JSON error, a body with no event, a redirect", async () => {
    const message = async (behaviour: string) => {
      const r = await sweep(behaviour);
      const { records } = await import("../../../src/core/results/files.ts").then((m) =>
        m.readResults(r.out),
      );
      return records[0]!.error!.message;
    };
    expect(await message("bare-json-error")).toBe(
      "HTTP 200 with a JSON error and no stream: model is overloaded, retry later",
    );
    expect(await message("comments-only")).toMatch(
      /^the body held no SSE event \(no "data:" line\); it began: : keep-alive/,
    );
    expect(await message("zero-tokens")).toBe(
      "no content-bearing event: the server answered with no token (finish_reason stop, 0 completion tokens in its usage); a prompt that fills the context, a stop sequence or a filter that ends it at once?",
    );
    // text streamed with a usage of 0 tokens: named for what it is, not blamed on ignore_eos
    const zero = await sweep("zero-usage");
    expect(zero.stderr).toMatch(
      /level 1: (.*; )?3 of 3 answers counted 0 output tokens in their usage \(finish_reason none; request \d+\), which ignore_eos does not explain/,
    );
    expect(zero.stderr).not.toMatch(/the server ignored it/);
    expect(await message("redirect")).toMatch(
      /^HTTP 307: the server redirects to https:\/\/infer\.example\/v1\/chat\/completions, and tokenbench does not follow redirects; point --base-url at where it leads/,
    );
  }, 130_000);

  it("close-mid keeps the events that did arrive", async () => {
    const r = await sweep("close-mid");
    const { records } = await import("../../../src/core/results/files.ts").then((m) => m.readResults(r.out));
    for (const rec of records) expect(rec.event_times_ms.length).toBe(2);
  });
  it("fractional usage: the count is not stored, the message says what was sent", async () => {
    const r = await sweep("fractional");
    const { records } = await import("../../../src/core/results/files.ts").then((m) => m.readResults(r.out));
    expect(records[0]!.usage!.completion_tokens).toBeNull();
    expect(records[0]!.error!.message).toContain("usage.completion_tokens is 8.5");
  });
});

describe("nothing measured is lost, nothing huge is kept", () => {
  it("a 5 MB /v1/models answer: the snapshot keeps a bounded part with a note", async () => {
    const r = await sweep("huge-models");
    expect(r.code, r.stderr).toBe(0);
    const kept = r.doc!.server!.endpoints["/v1/models"]!.body as { tokenbench_truncated?: string };
    expect(kept.tokenbench_truncated).toMatch(/the answer was \d+ bytes/);
    expect(statSync(r.out).size).toBeLessThan(512 * 1024);
  });
  it("an unwritable --out fails before any request is sent", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    const before = (await stats())["ok POST /v1/chat/completions"] ?? 0;
    // under a regular file (ENOTDIR, even for root), and a path that is a directory (EISDIR)
    for (const out of [join(file, "x.json"), dir]) {
      const r = await runCli(["sweep", "--base-url", `${root}/ok`, "--model", "hostile", "--out", out]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/\[out_unwritable\]: cannot write results to .* \([A-Z]+\); nothing was sent/);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    expect((await stats())["ok POST /v1/chat/completions"] ?? 0).toBe(before);
  });
  it("a kill between the .requests.jsonl and the .json: resume counts every record once", async () => {
    const out = join(dir, "pair.json");
    const args = ["--levels", "1,2", "--requests", "3", "--records", "file"];
    const first = await runCli([
      "sweep",
      "--base-url",
      `${root}/ok`,
      "--model",
      "hostile",
      "--warmup",
      "0",
      "--calibrate-prompts",
      "false",
      "--out",
      out,
      ...args,
    ]);
    expect(first.code, first.stderr).toBe(0);
    // The moment of the kill: level 2's records are in the JSONL, the document still says level 1 only.
    const doc = JSON.parse(readFileSync(out, "utf8"));
    doc.levels = doc.levels.slice(0, 1);
    doc.complete = false;
    writeFileSync(out, JSON.stringify(doc));
    const jsonl = readFileSync(out.replace(/\.json$/, ".requests.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(jsonl.length).toBe(3 + 4); // level 1: 3 requests; level 2: raised to 2 x 2 users
    const again = await runCli([
      "sweep",
      "--base-url",
      `${root}/ok`,
      "--model",
      "hostile",
      "--warmup",
      "0",
      "--calibrate-prompts",
      "false",
      "--out",
      out,
      ...args,
      "--resume",
    ]);
    expect(again.code, again.stderr).toBe(0);
    const { doc: done, records } = await import("../../../src/core/results/files.ts").then((m) =>
      m.readResults(out),
    );
    expect(done.complete).toBe(true);
    expect(done.levels.map((l) => l.requests)).toEqual([3, 4]);
    expect(records.length).toBe(7);
    expect(new Set(records.map((r) => r.id)).size).toBe(7);
  });
  it("a garbage checkpoint on --resume names the file, no stack trace", async () => {
    const out = join(dir, "garbage.json");
    writeFileSync(out, '{"schema_version": 1, "levels": [');
    const r = await runCli([
      "sweep",
      "--base-url",
      `${root}/ok`,
      "--model",
      "hostile",
      "--out",
      out,
      "--resume",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(out);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("flags that would run away are usage errors", () => {
  for (const [args, pattern] of [
    [["--levels", "1e9"], /--levels in closed loop are users: whole numbers up to 10000, got 1000000000/],
    [
      ["--mode", "open", "--levels", "1e6", "--requests", "10"],
      /--levels in open loop are request rates up to 10000/,
    ],
    [["--requests", "1e9"], /--requests is at most 1000000 per level/],
    [["--levels", ""], /--levels/],
    [["--levels", "1", ",2"], /unexpected argument ",2"/],
  ] as [string[], RegExp][]) {
    it(args.join(" "), async () => {
      const before = (await stats())["ok POST /v1/chat/completions"] ?? 0;
      const t0 = performance.now();
      const r = await runCli(["sweep", "--base-url", `${root}/ok`, "--model", "hostile", ...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(pattern);
      expect(performance.now() - t0).toBeLessThan(10_000);
      expect((await stats())["ok POST /v1/chat/completions"] ?? 0).toBe(before);
    });
  }
});

describe("SIGTERM ends the run promptly and writes what was finished", () => {
  for (const workers of ["1", "2"])
    it(`mid-level, --workers ${workers}: exits 130 within seconds; the finished level is in the document`, async () => {
      const out = join(dir, `sigterm-${workers}.json`);
      // level 1 sends 2 streams (--requests is raised to twice the users), level 2 then 4
      const slow = async () => (await stats())["slow POST /v1/chat/completions"] ?? 0;
      const before = await slow();
      const p = spawnCli([
        "sweep",
        "--base-url",
        `${root}/slow`,
        "--model",
        "hostile",
        "--levels",
        "1,2",
        "--requests",
        "1",
        "--warmup",
        "0",
        "--calibrate-prompts",
        "false",
        "--metrics-interval-ms",
        "0",
        "--out",
        out,
        "--workers",
        workers,
      ]);
      let stderr = "";
      p.stderr!.on("data", (d) => {
        stderr += d;
      });
      // level 1 takes ~6 s (two 3-s streams, one user); level 2 starts after it: stop in the middle of level 2.
      await new Promise<void>((res) => {
        const t = setInterval(() => {
          if (existsSync(out)) {
            clearInterval(t);
            res();
          }
        }, 100);
      });
      // then until level 2's stream has reached the server: on a busy machine starting the
      // level (two shard threads) took longer than the second this test once waited
      while ((await slow()) < before + 3) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500));
      const t0 = performance.now();
      p.kill("SIGTERM");
      const code = await new Promise<number | null>((res) => p.on("close", (c) => res(c)));
      const seconds = (performance.now() - t0) / 1000;
      expect(code, stderr).toBe(130);
      expect(seconds).toBeLessThan(5);
      expect(stderr).toMatch(/level 2 interrupted; not recorded/);
      const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
      expect(doc.complete).toBe(false);
      expect(doc.levels.map((l) => l.level)).toEqual([1]);
      expect(doc.levels[0]!.ok).toBeGreaterThan(0);
      expect(doc.levels[0]!.errors).toBe(0);
    }, 60_000);
});
