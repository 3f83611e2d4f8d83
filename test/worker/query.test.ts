import { describe, expect, it } from "vitest";
import type { ResultDocument } from "../../src/schema/v1.ts";
import { frontierOf } from "../../src/shared/frontier.ts";
import { agentCapacitySaturation } from "../helpers/agent-capacity.ts";
import { apiToken, call, json, sweepDoc, upload } from "./helpers.ts";

const seedHistory = async (repo: string, scales: number[], branch = "main") => {
  const t = await apiToken(repo);
  const ids: string[] = [];
  for (const s of scales) {
    const r = await json(upload(sweepDoc(repo, { branch, scale: s }), t));
    ids.push(r.run.id);
  }
  return { t, ids };
};

describe("query API", () => {
  it("lists runs newest first with cursor pagination and filters", async () => {
    const { ids } = await seedHistory("acme/list", [1, 1, 1, 1, 1]);
    const p1 = await json(call("/api/v1/repos/acme/list/runs?limit=2"));
    expect(p1.runs.map((r: { id: string }) => r.id)).toEqual([ids[4], ids[3]]);
    const p2 = await json(call(`/api/v1/repos/acme/list/runs?limit=2&cursor=${p1.next_cursor}`));
    expect(p2.runs.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const p3 = await json(call(`/api/v1/repos/acme/list/runs?limit=2&cursor=${p2.next_cursor}`));
    expect(p3.runs).toHaveLength(1);
    expect(p3.next_cursor).toBeNull();
    const bySha = await json(call(`/api/v1/repos/acme/list/runs?sha=${p1.runs[0].commit_sha.slice(0, 8)}`));
    expect(bySha.runs).toHaveLength(1);
    expect((await call("/api/v1/repos/acme/list/runs?cursor=garbage")).status).toBe(400);
    expect((await call("/api/v1/repos/acme/list/runs?limit=1000")).status).toBe(400);
  });

  it("a run's frontier, derived from its stored levels: the same points as the document's own", async () => {
    const repo = "acme/frontier";
    const t = await apiToken(repo);
    const doc = sweepDoc(repo, { branch: "main", scale: 1 });
    const up = await json(upload(doc, t));
    const r = await json(call(`/api/v1/runs/${up.run.id}/frontier`));
    expect(r.run_id).toBe(up.run.id);
    const levels = doc.levels.filter((l) => l.tpot_ms.p50 !== null);
    expect(r.frontier.points.map((p: { level: number }) => p.level).sort()).toEqual(
      levels.map((l) => l.level).sort(),
    );
    for (const p of r.frontier.points as { level: number; tok_s_per_user: number; output_tok_s: number }[]) {
      const l = doc.levels.find((x) => x.level === p.level)!;
      expect(p.tok_s_per_user).toBeCloseTo(1000 / l.tpot_ms.p50!, 9);
      expect(p.output_tok_s).toBeCloseTo(l.output_tok_s, 9);
    }
    expect((await call("/api/v1/runs/0000000000000000/frontier")).status).toBe(404);
  });

  it("a run's frontier as an image over the base runs its verdict read; the frontier at a target speed stored and badged", async () => {
    const repo = "acme/frontier-svg";
    const t = await apiToken(repo);
    // the example's two levels: 1 user at about 201.9 tok/s each, 4 users at about 200.9
    const withTarget = (d: ResultDocument) => {
      d.config = { ...d.config!, target_tok_s_per_user: [201.4] };
      d.frontier = frontierOf(d);
      return d;
    };
    const mains = [];
    for (let i = 0; i < 3; i++)
      mains.push(await json(upload(withTarget(sweepDoc(repo, { branch: "main", scale: 1 })), t)));
    const pr = await json(upload(withTarget(sweepDoc(repo, { branch: "feature", scale: 0.8, pr: 7 })), t));
    const res = await call(`/api/v1/runs/${pr.run.id}/frontier.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("image/svg+xml");
    const svg = await res.text();
    expect(svg.match(/<polyline/g)).toHaveLength(4); // the head and the three base runs its verdict read
    expect(svg).toContain("this run");
    expect(svg).toContain("2 earlier runs of the base");
    const missing = await call("/api/v1/runs/0000000000000000/frontier.svg");
    expect(missing.status).toBe(404);
    // the frontier at 201.4 tok/s per user: a benchmark of its own, with its throughput
    const run = await json(call(`/api/v1/runs/${mains[2].run.id}`));
    const at = run.points.filter((p: { benchmark: string }) => p.benchmark === "at 201.4 tok/s per user");
    const doc = run.document as ResultDocument;
    const target = doc.frontier!.targets[0]!;
    expect(target.reached).toBe(true);
    expect(at.find((p: { measure: string }) => p.measure === "output_tok_s").value).toBeCloseTo(
      target.output_tok_s!,
      6,
    );
    const badge = await json(
      call(
        `/badge/${repo}.json?benchmark=${encodeURIComponent("at 201.4 tok/s per user")}&measure=output_tok_s`,
      ),
    );
    expect(badge.label).toBe("output tok/s @ 201.4 tok/s/user");
    expect(badge.message).toMatch(/tok\/s$/);
  });

  it("series: points of one benchmark/measure/testbed/branch, oldest first", async () => {
    await seedHistory("acme/series", [1, 1.1, 1.2]);
    const s = await json(
      call("/api/v1/repos/acme/series/series?benchmark=closed%20c%3D4&measure=output_tok_s"),
    );
    expect(s.points).toHaveLength(3);
    expect(s.points[2].value / s.points[0].value).toBeCloseTo(1.2, 6);
    expect(s.measure).toMatchObject({ name: "output_tok_s", direction: "higher", unit: "tok/s" });
    const bad = await call("/api/v1/repos/acme/series/series?benchmark=x&measure=nope");
    expect((await json(bad)).error.code).toBe("unknown_measure");
  });

  it("catalog, repositories, 404 for unknown runs, CORS on reads, OpenAPI", async () => {
    await seedHistory("acme/cat", [1]);
    const cat = await json(call("/api/v1/repos/acme/cat/catalog"));
    expect(cat.benchmarks).toEqual(expect.arrayContaining(["closed c=1", "closed c=4"]));
    expect(cat.branches).toEqual(["main"]);
    const repos = await json(call("/api/v1/repos"));
    expect(repos.repositories.map((r: { name: string }) => r.name)).toContain("acme/cat");
    const missing = await call("/api/v1/runs/0000000000000000");
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.code).toBe("run_not_found");
    const cors = await call("/api/v1/repos", { headers: { origin: "https://example.com" } });
    expect(cors.headers.get("access-control-allow-origin")).toBe("*");
    const oa = await json(call("/openapi.json"));
    expect(oa.openapi).toBe("3.1.0");
    expect(Object.keys(oa.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/runs",
        "/api/v1/repos/{owner}/{repo}/compare",
        "/badge/{owner}/{repo}.svg",
      ]),
    );
    // every $ref resolves (internal ones to components, the result schema served by the service),
    // every operation has a unique operationId, numeric parameters are numbers
    const refs = JSON.stringify(oa)
      .match(/"\$ref":"[^"]+"/g)!
      .map((r) => r.slice(8, -1));
    for (const ref of new Set(refs)) {
      if (ref.startsWith("#/components/schemas/"))
        expect(oa.components.schemas[ref.split("/").at(-1)!], ref).toBeDefined();
      else {
        const served = await call(new URL(ref).pathname);
        expect(served.status, ref).toBe(200);
        expect((await json(served)).title).toMatch(/tokenbench result document/);
      }
    }
    const ops = Object.values(oa.paths).flatMap((p) =>
      Object.values(p as Record<string, { operationId: string }>),
    );
    const opIds = ops.map((o) => o.operationId);
    expect(opIds.every((id) => /^(get|post|delete)[A-Z]/.test(id))).toBe(true);
    expect(new Set(opIds).size).toBe(opIds.length);
    const params = ops.flatMap(
      (o) => (o as { parameters?: { name: string; schema: { type: string } }[] }).parameters ?? [],
    );
    for (const name of ["limit", "n", "threshold_pct", "confidence", "min_points"])
      expect(
        params.filter((p) => p.name === name).every((p) => ["integer", "number"].includes(p.schema.type)),
        name,
      ).toBe(true);
    const nf = await call("/nope");
    expect((await json(nf)).error.code).toBe("not_found");
  });
});

describe("compare: verdicts on constructed histories", () => {
  const noisy = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97];

  it("noise inside the interval -> unchanged", async () => {
    await seedHistory("acme/cmp-noise", noisy);
    const t = await apiToken("acme/cmp-noise");
    const head = await json(upload(sweepDoc("acme/cmp-noise", { branch: "pr-1", scale: 1.01 }), t));
    const c = await json(call(`/api/v1/repos/acme/cmp-noise/compare?head=${head.run.id}`));
    const row = c.rows.find(
      (r: { benchmark: string; measure: string }) =>
        r.benchmark === "closed c=4" && r.measure === "output_tok_s",
    );
    expect(row.method, JSON.stringify(row)).toBe("history-t");
    expect(row.base_n).toBe(8);
    expect(row.verdict, JSON.stringify(row)).toBe("unchanged");
    expect(c.baseline_runs).toHaveLength(8);
  });

  it("a shift beyond the interval -> regressed or improved by direction", async () => {
    await seedHistory("acme/cmp-shift", noisy);
    const t = await apiToken("acme/cmp-shift");
    const worse = await json(upload(sweepDoc("acme/cmp-shift", { branch: "pr-2", scale: 0.8 }), t));
    const c = await json(call(`/api/v1/repos/acme/cmp-shift/compare?head=${worse.run.id}`));
    const pick = (m: string) =>
      c.rows.find(
        (r: { benchmark: string; measure: string }) => r.benchmark === "closed c=4" && r.measure === m,
      );
    expect(pick("output_tok_s").verdict).toBe("regressed"); // higher is better, went down
    expect(pick("ttft_p95_ms").verdict).toBe("regressed"); // lower is better, went up
    expect(pick("output_tok_s").delta_pct).toBeCloseTo(-20, 0);
    const better = await json(upload(sweepDoc("acme/cmp-shift", { branch: "pr-3", scale: 1.25 }), t));
    const c2 = await json(call(`/api/v1/repos/acme/cmp-shift/compare?head=${better.run.id}`));
    const pick2 = (m: string) =>
      c2.rows.find(
        (r: { benchmark: string; measure: string }) => r.benchmark === "closed c=4" && r.measure === m,
      );
    expect(pick2("output_tok_s").verdict).toBe("improved");
    expect(pick2("ttft_p95_ms").verdict).toBe("improved");
    expect(c2.counts.regressed).toBe(0);
  });

  it("fewer than 5 base runs: still an interval (more history never gives a weaker method), but not gated", async () => {
    await seedHistory("acme/cmp-few", [1, 1.02, 0.99]);
    const t = await apiToken("acme/cmp-few");
    const head = await json(upload(sweepDoc("acme/cmp-few", { branch: "pr", scale: 0.7 }), t));
    const c = await json(call(`/api/v1/repos/acme/cmp-few/compare?head=${head.run.id}`));
    const row = c.rows.find(
      (r: { benchmark: string; measure: string }) =>
        r.benchmark === "closed c=4" && r.measure === "output_tok_s",
    );
    expect(row.method).toBe("history-t");
    expect(row.interval_pct).toHaveLength(2);
    expect(row.verdict).toBe("regressed"); // -30 %, beyond even a 3-run interval
    expect(row.severity).toBe("warning"); // informational: the gate needs 5 runs
    expect(c.gate.status).toBe("not_gated");
    expect(c.gate.reason).toMatch(/3 usable runs, 5 are needed to gate/);
    expect(c.failed).toBe(false);
  });

  it("thresholds and fail_on: a measure's own rule gates, the * rule warns; bad rules are a 400", async () => {
    await seedHistory("acme/cmp-rules", noisy);
    const t = await apiToken("acme/cmp-rules");
    const head = await json(upload(sweepDoc("acme/cmp-rules", { branch: "pr-r", scale: 0.8 }), t));
    const q = (rules: string, failOn: string) =>
      json(
        call(
          `/api/v1/repos/acme/cmp-rules/compare?head=${head.run.id}&thresholds=${encodeURIComponent(rules)}&fail_on=${failOn}`,
        ),
      );
    const pick = (c: { rows: { benchmark: string; measure: string }[] }, m: string) =>
      c.rows.find((r) => r.benchmark === "closed c=4" && r.measure === m) as unknown as {
        verdict: string;
        severity: string;
        rule: string;
      };
    // -20 % output tok/s beyond its own -10 %, TTFT p95 +25 % (gated by default): the gate fails;
    // ITL p50 (not gated) regressed too: a warning
    const c = await q("output_tok_s=-10%, *=t-test", "regression");
    expect(c.rules).toBe("output_tok_s=-10%, *=t-test");
    expect(pick(c, "output_tok_s")).toMatchObject({
      verdict: "regressed",
      severity: "regression",
      rule: "-10%",
    });
    expect(pick(c, "ttft_p95_ms")).toMatchObject({
      verdict: "regressed",
      severity: "regression",
      rule: "t-test",
    });
    expect(pick(c, "tpot_p50_ms")).toMatchObject({ verdict: "regressed", severity: "warning" });
    expect(c.gate.status).toBe("failed");
    expect(c.failed).toBe(true);
    // looser own rules for the gated measures: the gate passes, fail_on=warning still fails on the rest
    const rules = "output_tok_s=-30%, ttft_p95_ms=+30%, ttft_p50_ms=+30%, *=t-test";
    const loose = await q(rules, "regression");
    expect(pick(loose, "output_tok_s")).toMatchObject({ verdict: "unchanged", severity: "none" });
    expect(loose.gate.status).toBe("passed");
    expect(loose.failed).toBe(false);
    expect((await q(rules, "warning")).failed).toBe(true);
    expect((await q("*=off", "warning")).failed).toBe(false);
    const bad = await call(
      `/api/v1/repos/acme/cmp-rules/compare?head=${head.run.id}&thresholds=ttft_p95_ms%3D-5%25`,
    );
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.code).toBe("invalid_rules");
  });

  it("no base runs -> no_baseline", async () => {
    const t = await apiToken("acme/cmp-none");
    const head = await json(upload(sweepDoc("acme/cmp-none", { branch: "pr" }), t));
    const c = await json(call(`/api/v1/repos/acme/cmp-none/compare?head=${head.run.id}`));
    expect(c.rows.every((r: { verdict: string }) => r.verdict === "no_baseline")).toBe(true);
  });
});

describe("badges", () => {
  it("SVG and shields JSON of the headline measure, coloured by verdict, with ETag", async () => {
    await seedHistory("acme/badge", [1, 1, 1, 1, 1, 0.5]);
    const svg = await call("/badge/acme/badge.svg");
    expect(svg.headers.get("content-type")).toContain("image/svg+xml");
    expect(svg.headers.get("cache-control")).toBe("public, max-age=60");
    const text = await svg.text();
    expect(text).toContain("output tok/s @ c4"); // the measure and the level, in words
    expect(text).toContain("#d73a49"); // regressed: halved throughput
    const etag = svg.headers.get("etag")!;
    const again = await call("/badge/acme/badge.svg", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    const j = await json(call("/badge/acme/badge.json?measure=ttft_p50_ms&benchmark=closed%20c%3D1"));
    expect(j).toMatchObject({ schemaVersion: 1, label: "TTFT p50 @ c1" });
    expect(j.message).toMatch(/ms$/);
    const spark = await (await call("/badge/acme/badge/sparkline.svg")).text();
    expect(spark).toContain("<polyline");
  });

  it("agent capacity: its own benchmark per tier, badged as 'agent capacity @ TIER' with its value, red when the newest run lost sessions", async () => {
    const repo = "acme/agents";
    const t = await apiToken(repo);
    const withCapacity = (sessions: number, branch = "main") => {
      const d = sweepDoc(repo, { branch });
      d.saturation = agentCapacitySaturation(sessions);
      return d;
    };
    for (const s of [12, 12, 13, 12, 12, 8]) expect((await upload(withCapacity(s), t)).status).toBe(201);
    const j = await json(
      call(`/badge/${repo}.json?measure=agent_sessions&benchmark=agent%20capacity%20fast`),
    );
    expect(j.label).toBe("agent capacity @ fast");
    expect(j.message).toMatch(/^8(\.0+)? sessions$/);
    expect(j.color).toBe("critical"); // regressed: a third of the sessions gone
    // a run-wide point is valid when its run is (no level's reason covers it): main's draw a band
    const s = await json(
      call(
        `/api/v1/repos/${repo}/series?benchmark=agent%20capacity%20fast&measure=agent_sessions&branch=main`,
      ),
    );
    expect(s.points.map((p: { valid: number }) => p.valid)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it("the sparkline's scale is honest: a 0.4 % wobble stays flat, a 30 % drop reaches the edge", async () => {
    const ys = async (repo: string, scales: number[]) => {
      await seedHistory(repo, scales);
      const svg = await (await call(`/badge/${repo}/sparkline.svg`)).text();
      const pts = /points="([^"]+)"/
        .exec(svg)![1]!
        .split(" ")
        .map((p) => Number(p.split(",")[1]));
      return Math.max(...pts) - Math.min(...pts);
    };
    expect(await ys("acme/spark-wobble", [1, 1.004, 0.998, 1.002, 1])).toBeLessThan(1); // of 20 px
    expect(await ys("acme/spark-drop", [1, 1, 1, 0.7, 0.7])).toBeGreaterThan(15);
  });

  it("grey `no data` rather than 404", async () => {
    const res = await call("/badge/acme/nothing-here.svg");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("no data");
    expect(text).toContain("#9f9f9f");
  });
});

describe("dashboard shell", () => {
  it("serves the HTML shell that loads the Worker's own assets (no CDN)", async () => {
    for (const path of ["/", "/r/acme/list", "/runs/0123456789abcdef"]) {
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      const html = await res.text();
      expect(html).toContain('<script type="module" src="/assets/app.js">');
      expect(html).toContain('href="/assets/app.css"');
      expect(html).not.toMatch(/https?:\/\/(?!127)/);
    }
  });
});

describe("read token", () => {
  it("when READ_TOKEN is set, reads need it; a badge shows a grey 'private' and no figure", async () => {
    const { env } = await import("cloudflare:test");
    const e = { ...env, READ_TOKEN: "reader-secret" };
    const denied = await call("/api/v1/repos", {}, e);
    expect(denied.status).toBe(401);
    expect((await json(denied)).error.code).toBe("read_token_required");
    const badge = await call("/badge/acme/list.svg", {}, e);
    expect(badge.headers.get("x-tokenbench-error")).toBe("read_token_required");
    const svg = await badge.text();
    expect(svg).toContain("private");
    expect(svg).not.toMatch(/tok\/s|ms</);
    const ok = await call("/api/v1/repos", { headers: { authorization: "Bearer reader-secret" } }, e);
    expect(ok.status).toBe(200);
  });
  it("without the token, a run id's existence is not revealed: 401 for a real id and a made-up one alike", async () => {
    const { env } = await import("cloudflare:test");
    const e = { ...env, READ_TOKEN: "reader-secret" };
    const token = await apiToken("acme/secret-runs");
    const up = await json(upload(sweepDoc("acme/secret-runs"), token));
    const real = await call(`/api/v1/runs/${up.run.id}`, {}, e);
    const fake = await call("/api/v1/runs/0123456789abcdef", {}, e);
    expect([real.status, fake.status]).toEqual([401, 401]);
    expect(await real.text()).toBe(await fake.text());
  });
});

describe("change points on the default branch (real D1)", () => {
  const wobble = [1.0, 1.03, 0.97, 1.015, 0.985, 1.025, 0.975, 1.0];
  it("a 10 % step after 8 stable runs is found at the run that starts it", async () => {
    const { ids } = await seedHistory("acme/cp-step", [...wobble, ...wobble.map((x) => x * 0.9)]);
    const r = await json(
      call("/api/v1/repos/acme/cp-step/change-points?benchmark=closed%20c%3D4&measure=output_tok_s"),
    );
    expect(r.points).toBe(16);
    expect(r.change_points.map((c: { run_id: string }) => c.run_id)).toEqual([ids[8]]);
    expect(r.change_points[0].delta_pct).toBeCloseTo(-10, 0);
    expect(r.change_points[0].p_value).toBeLessThan(0.01);
  });
  it("20 runs of pure noise (CV 3 %) give none; bad parameters are a 400", async () => {
    // a fixed pseudo-random wobble of CV ~3 %
    const noise = Array.from({ length: 20 }, (_, i) => 1 + 0.03 * Math.sin(i * 2.7 + 0.3) * 1.4);
    await seedHistory("acme/cp-noise", noise);
    const r = await json(
      call("/api/v1/repos/acme/cp-noise/change-points?benchmark=closed%20c%3D4&measure=output_tok_s"),
    );
    expect(r.points).toBe(20);
    expect(r.change_points).toEqual([]);
    const bad = await call("/api/v1/repos/acme/cp-noise/change-points?benchmark=closed%20c%3D4");
    expect(bad.status).toBe(400);
  });
});

describe("a search's saturation point is a measure the service stores and serves", () => {
  it("stored as saturation_rps on the 'search saturation' benchmark, with a series", async () => {
    const t = await apiToken("acme/search");
    for (const rate of [37.5, 38.1]) {
      const d = sweepDoc("acme/search");
      d.saturation = {
        max_rate_rps: rate,
        bracket_rps: [rate, rate * 1.05],
        pass_pct_at_max: 95,
        goodput_at_max_rps: rate * 0.9,
        target_pass_pct: 90,
        probes: 8,
        method: "bisection",
      };
      expect((await upload(d, t)).status).toBe(201);
    }
    const s = await json(
      call("/api/v1/repos/acme/search/series?benchmark=search%20saturation&measure=saturation_rps"),
    );
    expect(s.points.map((p: { value: number }) => p.value)).toEqual([37.5, 38.1]);
    // valid as its run is: a run-wide point no level's reason covers
    expect(s.points.map((p: { valid: number }) => p.valid)).toEqual([1, 1]);
    expect(s.measure.label).toBe("max rate under SLO");
  });
});

describe("a reasoning model's measures are stored, trended and badged", () => {
  it("TTFAT and the reasoning figures become points with series, in the catalogue's names", async () => {
    const t = await apiToken("acme/reasoning");
    for (const ms of [900, 960]) {
      const d = sweepDoc("acme/reasoning");
      const stats = (v: number) => ({ n: 8, mean: v, min: v, max: v, p50: v, p90: v, p95: v, p99: v });
      for (const l of d.levels) {
        l.ttfat_ms = stats(ms);
        l.reasoning_ms = stats(ms - 100);
        l.reasoning_tokens = stats(64);
        l.answer_tokens = stats(64);
      }
      expect((await upload(d, t)).status).toBe(201);
    }
    const s = await json(
      call("/api/v1/repos/acme/reasoning/series?benchmark=closed%20c%3D4&measure=ttfat_p95_ms"),
    );
    expect(s.points.map((p: { value: number }) => p.value)).toEqual([900, 960]);
    expect(s.measure.label).toBe("TTFAT p95");
    const r = await json(
      call("/api/v1/repos/acme/reasoning/series?benchmark=closed%20c%3D4&measure=reasoning_tokens_p50"),
    );
    expect(r.points.map((p: { value: number }) => p.value)).toEqual([64, 64]);
    const badge = await call("/badge/acme/reasoning.svg?measure=ttfat_p95_ms");
    expect(badge.status).toBe(200);
    expect(await badge.text()).toMatch(/TTFAT p95/);
  });
});

describe("energy and cost measures", () => {
  it("tokens per joule and dollars per million tokens are stored, trended, compared and badged", async () => {
    const repo = "acme/energy";
    const t = await apiToken(repo);
    // 400 W for main's runs, 500 W for the PR's: tokens per joule falls by a fifth
    const withGpu = (d: ReturnType<typeof sweepDoc>, watts: number) => {
      for (const l of d.levels)
        l.gpu = {
          source: "nvidia-smi",
          energy_method: "counter",
          window: "steady",
          window_s: 10,
          energy_j: watts * 10,
          mean_power_w: watts,
          peak_power_w: watts,
          idle_power_w: 60,
          output_tok_per_j: l.output_tok_s / watts,
          j_per_output_tok: watts / l.output_tok_s,
          j_per_request: watts / l.req_s,
          w_per_user: watts / l.level,
          usd_per_m_output_tok: (2.5 / 3600 / l.output_tok_s) * 1e6,
          usd_per_m_total_tok: (2.5 / 3600 / l.total_tok_s) * 1e6,
          per_gpu: [],
          unknown_reason: null,
        };
      return d;
    };
    for (let i = 0; i < 5; i++) expect((await upload(withGpu(sweepDoc(repo), 400 + i), t)).status).toBe(201);
    const head = await json(upload(withGpu(sweepDoc(repo, { branch: "pr", pr: 3 }), 500), t));
    const s = await json(
      call(`/api/v1/repos/${repo}/series?benchmark=closed%20c%3D4&measure=output_tok_per_j`),
    );
    expect(s.points).toHaveLength(5);
    const c = await json(call(`/api/v1/repos/${repo}/compare?head=${head.run.id}`));
    const row = c.rows.find(
      (r: { benchmark: string; measure: string }) =>
        r.benchmark === "closed c=4" && r.measure === "output_tok_per_j",
    );
    expect(row).toMatchObject({ method: "history-t", verdict: "regressed" });
    expect(c.rows.some((r: { measure: string }) => r.measure === "usd_per_m_output_tok")).toBe(true);
    const badge = await (
      await call(`/badge/${repo}.svg?measure=output_tok_per_j&benchmark=closed%20c%3D4&branch=main`)
    ).text();
    expect(badge).toContain("tok/J @ c4");
  });
});
