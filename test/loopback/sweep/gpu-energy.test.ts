// GPU energy and cost per level, without a GPU: the CLI against the mock with a fake nvidia-smi
// first on PATH that replays a known trace (two GPUs at 300 W and 150 W, the energy counter
// exactly power × time), a DCGM exporter's text served over HTTP, the sampler killed mid-sweep,
// GPU indices that do not exist, and no GPU tool at all.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeNvidiaSmiPath } from "../../../scripts/fake-gpu.ts";
import { runAction } from "../../../scripts/run-action.ts";
import { type MockServer, start } from "../../../src/mock/index.ts";
import { parseResultDocument, type ResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { startMock } from "../../helpers/mock-process.ts";

const tmp = mkdtempSync(join(tmpdir(), "tokenbench-gpu-"));
const SWEEP = [
  "--levels",
  "1,4",
  "--requests",
  "40",
  "--max-tokens",
  "16",
  "--warmup",
  "0",
  "--gpu-sample-ms",
  "100",
];

describe("GPU energy and cost per level", () => {
  let mock: MockServer;
  let path: string;
  beforeAll(async () => {
    mock = await start({ port: 0, ttftMs: 30, itlMs: 5 });
    path = fakeNvidiaSmiPath();
  });
  afterAll(async () => {
    await mock?.close();
  });
  const sweep = async (name: string, extra: string[], env: Record<string, string>) => {
    const out = join(tmp, `${name}.json`);
    const r = await runCli(["sweep", "--base-url", mock.url, ...SWEEP, ...extra, "--out", out], { env });
    return {
      ...r,
      out,
      doc: () => parseResultDocument(JSON.parse(readFileSync(out, "utf8"))) as ResultDocument,
    };
  };

  it("from nvidia-smi's energy counter: joules, tokens per joule, joules per token and dollars exact to the trace", {
    timeout: 60_000,
  }, async () => {
    const r = await sweep("smi", ["--gpu-hour-cost", "2.5"], { PATH: path, FAKE_SMI_GPUS: "0:300,1:150" });
    expect(r.code, r.stderr).toBe(0);
    const doc = r.doc();
    expect(doc.gpu_telemetry!.source).toBe("nvidia-smi");
    expect(doc.gpu_telemetry!.gpus.map((g) => g.index)).toEqual([0, 1]);
    expect(doc.gpu_telemetry!.samples!.length).toBeGreaterThan(20);
    for (const l of doc.levels) {
      const g = l.gpu!;
      expect(g.unknown_reason, `level ${l.level}`).toBeNull();
      expect(g.energy_method).toBe("counter");
      const w = g.window_s;
      expect(w).toBeGreaterThan(0.5);
      // the trace: 450 W in all, 300 + 150, for the window's length
      expect(g.energy_j! / (450 * w)).toBeCloseTo(1, 6);
      expect(g.per_gpu.map((x) => x.energy_j! / w)).toEqual([expect.closeTo(300, 3), expect.closeTo(150, 3)]);
      expect(g.mean_power_w).toBeCloseTo(450, 3);
      expect(g.idle_power_w).toBeCloseTo(450, 6);
      expect(g.peak_power_w).toBeCloseTo(450, 6);
      expect(g.output_tok_per_j! / (l.output_tok_s / 450)).toBeCloseTo(1, 6);
      expect(g.j_per_output_tok! / (450 / l.output_tok_s)).toBeCloseTo(1, 6);
      expect(g.w_per_user! / (450 / l.level)).toBeCloseTo(1, 6);
      // $2.50 per GPU-hour, two GPUs, at the level's throughput
      expect(g.usd_per_m_output_tok! / (((2.5 * 2) / 3600 / l.output_tok_s) * 1e6)).toBeCloseTo(1, 9);
      expect(g.usd_per_m_total_tok! / (((2.5 * 2) / 3600 / l.total_tok_s) * 1e6)).toBeCloseTo(1, 9);
      expect(g.per_gpu.every((x) => x.samples >= 5 && x.name?.startsWith("FAKE-GPU"))).toBe(true);
    }
    const md = readFileSync(join(tmp, "smi.md"), "utf8");
    expect(md).toMatch(
      /GPU telemetry: nvidia-smi, 2 GPUs \(FAKE-GPU \(tokenbench test nvidia-smi\)\) every 100 ms/,
    );
    expect(md).toMatch(/\| GPU W \| tok\/J \| \$\/M out tok \|/);
    const csv = readFileSync(join(tmp, "smi.csv"), "utf8");
    expect(csv.split("\n")[0]).toContain("gpu_output_tok_per_j");
  });

  it("the frontier at a target speed per user: throughput, dollars and joules as the levels around it give them, by hand", {
    timeout: 60_000,
  }, async () => {
    // a server whose decode slows 60 % per running request (in its own process): 200 tok/s per
    // user alone, 71 at 4 users (yet more throughput: 267 tok/s against 152); the target 100
    // between them stays between on a busy machine, whose late timers only slow both (at 30 %
    // per request they were 200 and 105 about a target of 150, an in-process mock's timers in
    // the test's own loop, and the test failed once beside six busy loops)
    const slowing = await startMock({ ttftMs: 30, itlMs: 5, itlGrowthPerRunning: 0.6 });
    try {
      const out = join(tmp, "frontier.json");
      const r = await runCli(
        [
          "sweep",
          "--base-url",
          slowing.url,
          ...SWEEP,
          "--gpu-hour-cost",
          "2.5",
          "--target-tok-s-per-user",
          "1,100,1000",
          // the suite's other files load this machine: a client read up to 60 ms late stays valid
          "--client-late-floor-ms",
          "60",
          "--out",
          out,
        ],
        { env: { PATH: path, FAKE_SMI_GPUS: "0:300,1:150" } },
      );
      expect(r.code, r.stderr).toBe(0);
      const doc = parseResultDocument(JSON.parse(readFileSync(out, "utf8"))) as ResultDocument;
      const [one, four] = doc.levels;
      const x1 = 1000 / one!.tpot_ms.p50!;
      const x4 = 1000 / four!.tpot_ms.p50!;
      expect(x4).toBeLessThan(x1);
      // a frontier needs two valid, steady levels: say why not where it is missing
      expect(
        doc.frontier,
        JSON.stringify(doc.levels.map((l) => [l.level, l.validity, l.steady_state?.reason])),
      ).toBeDefined();
      const f = doc.frontier!;
      expect(f.gpus).toBe(2);
      expect(f.points.map((p) => [p.level, p.pareto])).toEqual([
        [4, true],
        [1, true],
      ]);
      const [below, inside, above] = f.targets;
      expect(below!.reached).toBe(false);
      expect(above!.reached).toBe(false);
      // 100 tok/s per user lies between the two levels' speeds (about 71 and 200)
      expect(x4).toBeLessThan(100);
      expect(x1).toBeGreaterThan(100);
      const t = (100 - x4) / (x1 - x4);
      const y = four!.output_tok_s + t * (one!.output_tok_s - four!.output_tok_s);
      const power = four!.gpu!.mean_power_w! + t * (one!.gpu!.mean_power_w! - four!.gpu!.mean_power_w!);
      expect(inside).toMatchObject({ reached: true, between: [4, 1] });
      expect(inside!.output_tok_s! / y).toBeCloseTo(1, 9);
      expect(inside!.output_tok_s_per_gpu! / (y / 2)).toBeCloseTo(1, 9);
      expect(inside!.usd_per_m_output_tok! / (((2.5 * 2) / (y * 3600)) * 1e6)).toBeCloseTo(1, 9);
      expect(inside!.j_per_output_tok! / (power / y)).toBeCloseTo(1, 9);
      const md = readFileSync(out.replace(/\.json$/, ".md"), "utf8");
      expect(md).toContain("**Frontier**");
      expect(md).toMatch(
        /- at 100\.0 tok\/s per user \(between levels 4 and 1\): [\d.]+ output tok\/s \([\d.]+ per GPU\), \$[\d.]+ per million output tokens/,
      );
      expect(md).toMatch(/- at 1000\.0 tok\/s per user: not reached .*never extrapolated/);
      // the chart: each level a point at its speed per user and its throughput per GPU
      const rep = await runCli(["report", out, "--out-dir", join(tmp, "frontier-plots"), "--png", "false"]);
      expect(rep.code, rep.stderr).toBe(0);
      const svg = readFileSync(join(tmp, "frontier-plots", "frontier.svg"), "utf8");
      expect(svg).toContain("Frontier: throughput against speed per user");
      const shown = [
        ...svg.matchAll(
          /tok\/s per user \(1000 \/ TPOT p50\): ([0-9.,]+); output tok\/s per GPU: ([0-9.,]+)/g,
        ),
      ].map((m) => [Number(m[1]!.replace(/,/g, "")), Number(m[2]!.replace(/,/g, ""))]);
      for (const p of f.points)
        expect(
          shown.some(
            ([u, y]) =>
              Math.abs(u! - p.tok_s_per_user) < 0.01 && Math.abs(y! - p.output_tok_s_per_gpu!) < 0.01,
          ),
          `level ${p.level} in ${JSON.stringify(shown)}`,
        ).toBe(true);
    } finally {
      await slowing.close();
    }
  });

  it("a sampler that dies mid-sweep: the levels after are unknown with the reason, never zero", {
    timeout: 60_000,
  }, async () => {
    const r = await sweep("died", [], { PATH: path, FAKE_SMI_GPUS: "0:300", FAKE_SMI_EXIT_AFTER_MS: "2500" });
    expect(r.code, r.stderr).toBe(0);
    const doc = r.doc();
    expect(doc.gpu_telemetry!.died!.reason).toMatch(/nvidia-smi exited \(code 3\)/);
    const last = doc.levels.at(-1)!.gpu!;
    expect(last.energy_j).toBeNull();
    expect(last.output_tok_per_j).toBeNull();
    // the last level began after the sampler died: said as such, never a negative time
    expect(last.unknown_reason).toMatch(
      /the GPU sampler (had stopped [\d.]+ s before|stopped [\d.]+ s into) the window \(nvidia-smi exited \(code 3\)\)/,
    );
    expect(last.unknown_reason).not.toMatch(/-\d/);
    expect(doc.levels.at(-1)!.validity!.reasons).toContainEqual(
      expect.objectContaining({ code: "telemetry_gap" }),
    );
    expect(doc.levels.every((l) => l.gpu!.energy_j !== 0)).toBe(true);
    expect(r.stderr).toMatch(/GPU energy unknown/);
  });

  it("GPU indices nvidia-smi does not list: refused before any load, naming the ones it lists", async () => {
    const r = await sweep("bad-index", ["--gpus", "0,7"], { PATH: path, FAKE_SMI_GPUS: "0:300,1:150" });
    expect(r.code).toBe(1);
    expect(existsSync(join(tmp, "bad-index.json"))).toBe(false);
    expect(r.stderr).toMatch(/gpus_unknown.*GPU 7, which nvidia-smi does not list \(it lists 0, 1\)/);
  });

  it("a combination the sweep refuses is refused before the GPU tool, the server or any socket: exit 2 at once (CLI and Action)", {
    timeout: 60_000,
  }, async () => {
    const env = { PATH: `${path}:${process.env.PATH}`, FAKE_SMI_GPUS: "0:300" };
    const args = [
      "--repeats",
      "2",
      "--shard",
      "1/2",
      "--start-at",
      String(Date.now() + 60_000),
      "--duration",
      "1",
    ];
    const t0 = Date.now();
    const r = await sweep("repeats-shard", args, env);
    expect(Date.now() - t0).toBeLessThan(5000); // a node start and a usage error: no GPU idle window, no contact
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--repeats with --shard: the runners' start slots are per level/);
    const a = await runAction(
      {
        "base-url": "http://127.0.0.1:9",
        repeats: "2",
        shard: "1/2",
        "start-at": String(Date.now() + 60_000),
        duration: "1",
        "gpu-sample-ms": "100",
      },
      {
        GITHUB_REPOSITORY: "acme/x",
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: "1".repeat(40),
      },
      {},
      { env },
    );
    expect(a.code, a.log).toBe(1);
    expect(a.log).toMatch(/::error::input "repeats": --repeats with --shard/);
    expect(a.log).not.toMatch(/server ready/);
  });

  it("no GPU tool: the fields are absent, never zero, and one notice says so", {
    timeout: 60_000,
  }, async () => {
    const r = await sweep("none", [], { PATH: "/usr/bin:/bin" });
    expect(r.code, r.stderr).toBe(0);
    const doc = r.doc();
    expect(doc.gpu_telemetry).toBeUndefined();
    expect(doc.levels.every((l) => l.gpu === undefined)).toBe(true);
    expect(r.stderr.match(/no GPU telemetry/g)).toHaveLength(1);
  });

  describe("a DCGM exporter over HTTP", () => {
    let server: Server;
    let url = "";
    const t0 = Date.now();
    beforeAll(async () => {
      server = createServer((_req, res) => {
        const mj = 1e9 + 200 * (Date.now() - t0); // 200 W since t0
        res.setHeader("content-type", "text/plain; version=0.0.4");
        res.end(
          [
            "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).",
            "# TYPE DCGM_FI_DEV_POWER_USAGE gauge",
            'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-dcgm-0",device="nvidia0",modelName="FAKE-DCGM",Hostname="h"} 200.000000',
            "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter",
            `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-dcgm-0",device="nvidia0",modelName="FAKE-DCGM",Hostname="h"} ${mj}`,
            'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-dcgm-0",device="nvidia0",modelName="FAKE-DCGM",Hostname="h"} 91',
            'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-dcgm-0",device="nvidia0",modelName="FAKE-DCGM",Hostname="h"} 60000',
            "",
          ].join("\n"),
        );
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      url = `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));
    it("energy from its counter, to within the reads' own latency", { timeout: 60_000 }, async () => {
      const r = await sweep("dcgm", ["--gpu-metrics-url", url, "--gpu-hour-cost", "4"], {
        PATH: "/usr/bin:/bin",
      });
      expect(r.code, r.stderr).toBe(0);
      const doc = r.doc();
      expect(doc.gpu_telemetry!.source).toBe("dcgm");
      for (const l of doc.levels) {
        const g = l.gpu!;
        expect(g.unknown_reason).toBeNull();
        expect(g.energy_method).toBe("counter");
        // each read is stamped when it arrived, a millisecond or two after the exporter wrote it
        expect(g.mean_power_w! / 200).toBeCloseTo(1, 1);
        expect(g.per_gpu[0]).toMatchObject({
          index: 0,
          name: "FAKE-DCGM",
          mem_used_max_mib: 60000,
          util_pct_mean: 91,
        });
        expect(g.usd_per_m_output_tok! / ((4 / 3600 / l.output_tok_s) * 1e6)).toBeCloseTo(1, 9);
      }
    });
  });
});
