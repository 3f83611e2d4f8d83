/**
 * `--server-command`: tokenbench starts the server, measures its start (first answer, ready,
 * first token, the phases its log states) cold and, with `--startup both`, warm after a restart,
 * runs the sweep against it and stops it. The command prints llama-server's own load lines
 * (as its log has them) a stated time apart, then runs the mock.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readResults } from "../../../src/core/results/files.ts";
import { CLI, runCli } from "../../helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-startup-"));
/** Between the "loading model" and "model loaded" lines, seconds. */
const LOAD_S = 0.4;

function serverCommand(port: number): string {
  return [
    `echo "0.00.005.958 I srv    load_model: loading model '/models/tiny.gguf'"`,
    `sleep ${LOAD_S}`,
    `echo "0.00.203.434 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 4096"`,
    `echo "0.00.209.521 I srv  llama_server: model loaded"`,
    `exec ${process.execPath} ${CLI} mockserver --port ${port} --ttft-ms 5 --itl-ms 1`,
  ].join("; ");
}

const refused = async (url: string) => {
  try {
    await fetch(url);
    return false;
  } catch {
    return true;
  }
};

describe("--server-command: the server's start, measured", () => {
  it("cold and warm: first answer, ready, first token and the log's phases in order; stopped after the sweep", async () => {
    const port = 20_000 + Math.floor(Math.random() * 5000);
    const out = join(dir, "both.json");
    const r = await runCli(
      [
        ...`sweep --levels 1 --requests 8 --warmup 0 --metrics-interval-ms 0 --calibrate-prompts false --startup both --out ${out}`.split(
          " ",
        ),
        "--base-url",
        `http://127.0.0.1:${port}`,
        "--server-command",
        serverCommand(port),
      ],
      { timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const { doc } = readResults(out);
    for (const s of [doc.startup!, doc.startup!.warm!]) {
      const at = (phase: string) => s.phases!.find((p) => p.phase === phase)!.at_s;
      expect(s.phases!.map((p) => p.phase)).toEqual([
        "loading model",
        "slots and KV cache sized",
        "model loaded",
      ]);
      expect(s.phases!.every((p) => p.engine === "llama.cpp")).toBe(true);
      // the lines came LOAD_S apart (stamped when read, every 50 ms)
      expect(at("model loaded") - at("loading model")).toBeGreaterThanOrEqual(LOAD_S - 0.06);
      // the mock starts after the last line: it answers, is ready, then gives a first token
      expect(s.answered_s!).toBeGreaterThanOrEqual(at("model loaded") - 0.06);
      expect(s.ready_s).toBeGreaterThanOrEqual(s.answered_s!);
      expect(s.first_token_s!).toBeGreaterThan(s.ready_s);
    }
    expect(doc.levels[0]!.ok).toBe(8);
    expect(r.stdout).toMatch(
      /\*\*Server start:\*\* ready in [\d.]+ s \(first answer [\d.]+ s, first token [\d.]+ s, loading model [\d.]+ s, .*model loaded [\d.]+ s\) from the command's start; warm restart: ready in/,
    );
    // its output beside the results, both starts in it; and no server left behind
    const log = readFileSync(join(dir, "both.server.log"), "utf8");
    expect(log.match(/llama_server: model loaded/g)).toHaveLength(2);
    expect(await refused(`http://127.0.0.1:${port}/v1/models`)).toBe(true);
  }, 90_000);

  it("a command whose server never comes up: the error names why, with no server left running", async () => {
    const out = join(dir, "dies.json");
    const r = await runCli(
      [
        ...`sweep --levels 1 --requests 4 --ready-timeout-s 20 --out ${out}`.split(" "),
        "--base-url",
        "http://127.0.0.1:9",
        "--server-command",
        `echo "load_model: loading model"; exit 3`,
      ],
      { timeoutMs: 60_000 },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the server command exited with code 3 before the server was ready/);
    expect(existsSync(join(dir, "dies.server.log"))).toBe(true);
  }, 90_000);
});
