// First contact with a server, through the CLI in its own process: every case gives a one-line
// reason and the right exit code before any load is sent.
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { startHostileServer } from "../../helpers/hostile-process.ts";
import { startMock } from "../../helpers/mock-process.ts";

const tmp = mkdtempSync(join(tmpdir(), "tokenbench-first-"));
const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
const common = [
  "--levels",
  "1",
  "--requests",
  "4",
  "--max-tokens",
  "4",
  "--prompt-tokens",
  "16",
  "--warmup",
  "0",
];
const errorLines = (stderr: string) => stderr.split("\n").filter((l) => l.includes("error"));

describe("first contact", () => {
  it("a dead port: one line naming the URL and the cause, exit 1", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await runCli([
      "sweep",
      "--base-url",
      url,
      "--ready-timeout-s",
      "1",
      ...common,
      "--out",
      join(tmp, "dead.json"),
    ]);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain(url);
    expect(r.stderr).toMatch(/connection refused/);
    expect(r.stderr).toMatch(/\[not_ready\]/);
  });

  it("an unknown --model: an error listing the served models, no load sent", async () => {
    const m = await startMock({ ttftMs: 1, itlMs: 1 });
    const r = await runCli([
      "sweep",
      "--base-url",
      m.url,
      "--model",
      "nope",
      ...common,
      "--out",
      join(tmp, "model.json"),
    ]);
    const stats = await m.stats();
    await m.close();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[model_not_served\].*does not serve model "nope".*it serves: mock-model/);
    expect(stats.completed).toBe(0); // the 1-token probe was refused; nothing else was sent
  });

  it.each([
    ["responses", "Responses API"],
    ["messages", "Messages API"],
  ])("--api %s against a server without the %s: one line saying so, no load sent", async (api, name) => {
    const server = await startHostileServer();
    try {
      const r = await runCli([
        "sweep",
        "--base-url",
        `${server.root}/plain`,
        "--api",
        api,
        ...common,
        "--out",
        join(tmp, `${api}.json`),
      ]);
      expect(r.code).toBe(1);
      const lines = errorLines(r.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`\\[api_unsupported\\].*does not serve the ${name}.*HTTP 404.*use --api chat`),
      );
    } finally {
      server.stop();
    }
  });

  it("a prompt longer than the server's context: refused before any load", async () => {
    const m = await startMock({ ttftMs: 1, itlMs: 1, maxModelLen: 100 });
    const r = await runCli([
      "sweep",
      "--base-url",
      m.url,
      ...common,
      "--prompt-tokens",
      "200",
      "--out",
      join(tmp, "ctx.json"),
    ]);
    const stats = await m.stats();
    await m.close();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[prompt_too_long\].*context of 100 tokens/);
    expect(stats.completed).toBeLessThanOrEqual(1); // at most the calibration's usage probe
  });

  it("failures: each code with its count and first server message; exit 1 over --max-error-rate", async () => {
    const m = await startMock({ ttftMs: 1, itlMs: 1, faults: [{ kind: "http500", rate: null, every: 2 }] });
    const out = join(tmp, "faults.json");
    const r = await runCli([
      "sweep",
      "--base-url",
      m.url,
      ...common,
      "--requests",
      "10",
      "--calibrate-prompts=false",
      "--out",
      out,
    ]);
    await m.close();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/http_error=5 \(first: HTTP 500: .*injected fault/);
    expect(r.stderr).toMatch(/more than 5% of requests failed \(level 1: 5 of 10 failed\)/);
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    expect(doc.levels[0]!.errors).toBe(5); // everything measured is kept
    const ok = await runCli(["sweep", "--base-url", m.url, "--ready-timeout-s", "1"]).catch(() => null);
    expect(ok?.code).toBe(1); // the mock is gone now: not ready
  });

  it("--max-error-rate 60 accepts the same run; --quiet prints nothing on success", async () => {
    const m = await startMock({ ttftMs: 1, itlMs: 1, faults: [{ kind: "http500", rate: null, every: 2 }] });
    const r = await runCli([
      "sweep",
      "--base-url",
      m.url,
      ...common,
      "--requests",
      "10",
      "--max-error-rate",
      "60",
      "--quiet",
      "--out",
      join(tmp, "q.json"),
    ]);
    await m.close();
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });

  it("prompts are sized to the server's count: the document records the calibration", async () => {
    const m = await startMock({ ttftMs: 1, itlMs: 1, flavor: "sglang" });
    const out = join(tmp, "cal.json");
    const r = await runCli(["sweep", "--base-url", m.url, ...common, "--prompt-tokens", "100", "--out", out]);
    await m.close();
    expect(r.code).toBe(0);
    const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8")));
    const cal = doc.prompt_calibration!;
    expect(cal.method).toBe("tokenize");
    expect(cal.within_tolerance).toBe(true);
    const p = doc.levels[0]!.prompt_tokens!;
    expect(Math.abs(p.min! - 100)).toBeLessThanOrEqual(4);
    expect(Math.abs(p.max! - 100)).toBeLessThanOrEqual(4);
    expect(r.stderr).toMatch(
      /prompts: \d+ words give \d+ prompt tokens as the server counts them \(asked 100; tokenize\)/,
    );
  });
});
