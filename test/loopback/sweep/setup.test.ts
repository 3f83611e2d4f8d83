// The CLI and the Action share one sweep setup: the same settings, given as flags or as inputs,
// give the same configuration and the same first contact with the server, request for request.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readInputs } from "../../../src/action/inputs.ts";
import { sweepSettingsOf } from "../../../src/cli/sweep-command.ts";
import { prepareSweep } from "../../../src/core/sweep/prepare.ts";

const DATASET = resolve(import.meta.dirname, "../../../examples/dataset.jsonl");

/** A server that answers what a preflight asks (readiness, models, token counts) and logs every request. */
function recordingServer() {
  const log: string[] = [];
  const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => {
      body += d;
    });
    req.on("end", () => {
      log.push(`${req.method} ${req.url} ${body}`);
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(v));
      };
      const b = body ? (JSON.parse(body) as { messages?: { content: string }[]; content?: string }) : {};
      const text = b.messages?.map((m) => m.content).join(" ") ?? b.content ?? "";
      if (req.url === "/health") return json(200, { status: "ok" });
      if (req.url === "/v1/models") return json(200, { data: [{ id: "served-model", max_model_len: 4096 }] });
      if (req.url === "/tokenize") return json(200, { count: words(b.content ?? "") });
      if (req.url === "/v1/chat/completions")
        return json(200, {
          choices: [{ message: { content: "x" } }],
          usage: { prompt_tokens: words(text) + 5 },
        });
      json(404, { error: { message: "no such route" } });
    });
  });
  return { server, log };
}

describe("one sweep setup for the CLI and the Action", () => {
  let srv: ReturnType<typeof recordingServer>;
  let url: string;
  beforeAll(async () => {
    srv = recordingServer();
    await new Promise<void>((r) => srv.server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(srv.server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => (srv.server as Server).close(() => r())));

  /** The setup through each entry point's own parser, and the requests each sent. */
  async function both(settings: Record<string, string>) {
    const argv = Object.entries(settings).flatMap(([k, v]) => [`--${k}`, v]);
    const cli = sweepSettingsOf(argv)!;
    const inputs = readInputs((name) => settings[name] ?? "");
    const run = async (v: Parameters<typeof prepareSweep>[0], cfg: Parameters<typeof prepareSweep>[1]) => {
      srv.log.length = 0;
      const setup = await prepareSweep(v, cfg, { onNotice: () => {} });
      return { setup, calls: [...srv.log] };
    };
    return { cli: await run(cli.values, cli.config), action: await run(inputs, inputs.sweep) };
  }

  it("synthetic prompts: the same config, target, calibration and preflight calls", async () => {
    const { cli, action } = await both({
      "base-url": url,
      levels: "1,2,4",
      "prompt-tokens": "64",
      "max-tokens": "16",
      "slo-ttft-ms": "500",
      seed: "7",
    });
    expect(action.setup.config).toEqual(cli.setup.config);
    expect(cli.setup.config.levels).toEqual([1, 2, 4]);
    expect(action.setup.pre.target).toEqual(cli.setup.pre.target);
    expect(cli.setup.pre.target.model).toBe("served-model");
    expect(action.setup.pre.calibration).toEqual(cli.setup.pre.calibration);
    expect(cli.setup.pre.calibration?.method).toBe("tokenize");
    expect(action.setup.pre.readiness.probes).toEqual(cli.setup.pre.readiness.probes);
    expect(action.setup.load).toEqual(cli.setup.load);
    // (the snapshot's endpoints are asked in parallel: their order is the network's)
    expect([...action.calls].sort()).toEqual([...cli.calls].sort());
    // the calls are the preflight's: readiness, the snapshot, then the calibration's counts
    expect(cli.calls[0]).toMatch(/^GET \/health/);
    expect(cli.calls.some((c) => c.startsWith("POST /tokenize"))).toBe(true);
  });

  it("a dataset: recorded in the config the same way, no calibration from either", async () => {
    const { cli, action } = await both({ "base-url": url, model: "served-model", dataset: DATASET });
    expect(cli.setup.config.dataset?.name).toBe("dataset.jsonl");
    expect(action.setup.config).toEqual(cli.setup.config);
    expect(action.setup.dataset?.sha256).toBe(cli.setup.dataset?.sha256);
    expect(cli.setup.pre.calibration).toBeNull();
    expect([...action.calls].sort()).toEqual([...cli.calls].sort());
    expect(cli.calls.some((c) => c.startsWith("POST /tokenize"))).toBe(false);
  });

  it("what the workload file holds but the sweep does not use is a notice of the setup", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "tokenbench-setup-")), "share.json");
    writeFileSync(
      path,
      JSON.stringify([{ conversations: [{ from: "human", value: "hi" }] }, { conversations: [] }]),
    );
    const cli = sweepSettingsOf(["--base-url", url, "--model", "served-model", "--dataset", path])!;
    const notices: string[] = [];
    await prepareSweep(cli.values, cli.config, { onNotice: (m) => notices.push(m) });
    expect(notices).toContain(
      "share.json: 1 of 2 conversations have no human turn to use as the prompt (item 1): they are skipped",
    );
    rmSync(dirname(path), { recursive: true, force: true });
  });
});
