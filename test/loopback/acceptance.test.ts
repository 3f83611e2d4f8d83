// Issue #3's acceptance: the seed's demo saturation curve, reproduced against the mock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSweepConfig } from "../../src/core/sweep/config.ts";
import { runSweep } from "../../src/core/sweep/sweep.ts";
import { spawnCli } from "../helpers/cli.ts";
import { contact } from "../helpers/target.ts";

describe("seed demo: closed loop against mockserver --ttft-ms 60 --itl-ms 12 --capacity 16", () => {
  // The mock runs in its own process, as `tokenbench mockserver` does for users, so the client
  // and the server do not share an event loop.
  let mock: { url: string; stop: () => void };
  beforeAll(async () => {
    const p = spawnCli([
      "mockserver",
      "--port",
      "0",
      "--ttft-ms",
      "60",
      "--itl-ms",
      "12",
      "--capacity",
      "16",
    ]);
    const url = await new Promise<string>((res, rej) => {
      let err = "";
      p.stderr!.on("data", (d: Buffer) => {
        err += d;
        const m = /listening on (http:\/\/\S+): /.exec(err);
        if (m) res(m[1]!);
      });
      p.on("exit", (c) => rej(new Error(`mock exited ${c}: ${err}`)));
    });
    mock = { url, stop: () => p.kill("SIGTERM") };
  });
  afterAll(() => mock.stop());

  it("linear to 16, flat beyond, TTFT jumps, ITL steady, goodput falls", { timeout: 90_000 }, async () => {
    const doc = await runSweep({
      pre: await contact(mock.url),
      records: "none",
      resume: false,
      out: null,
      config: defaultSweepConfig({
        levels: [1, 4, 16, 32, 64],
        requests_per_level: 32,
        prompt_tokens: 256,
        max_tokens: 32,
        timeout_s: 30,
        slo: { ttft_ms: 500, tpot_ms: 20, e2e_ms: null },
        metrics_interval_ms: null,
      }),
    });
    const by = Object.fromEntries(doc.levels.map((l) => [l.level, l]));
    const [l1, l4, l16, l32, l64] = [by[1]!, by[4]!, by[16]!, by[32]!, by[64]!];
    for (const l of doc.levels) expect(l.errors).toBe(0);
    // roughly linear up to 16
    expect(l4.output_tok_s / l1.output_tok_s).toBeGreaterThan(3.4);
    expect(l16.output_tok_s / l1.output_tok_s).toBeGreaterThan(13);
    // flat (±10 %) at 32 and 64
    expect(Math.abs(l32.output_tok_s / l16.output_tok_s - 1)).toBeLessThan(0.1);
    expect(Math.abs(l64.output_tok_s / l16.output_tok_s - 1)).toBeLessThan(0.1);
    // queueing shows in TTFT, not ITL
    expect(l32.ttft_ms.p50!).toBeGreaterThanOrEqual(3 * l16.ttft_ms.p50!);
    expect(Math.abs(l64.itl_ms.p50! / l1.itl_ms.p50! - 1)).toBeLessThan(0.15);
    expect(l32.goodput_req_s).toBeLessThan(l16.goodput_req_s);
  });
});
