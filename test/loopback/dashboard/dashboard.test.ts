/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The dashboard in real headless Chromium (Debian's, driven by playwright-core) against
// `wrangler dev` with a seeded local D1: pages load without console errors, charts render with
// data, navigation repository -> measure -> run works; screenshots go to test-output/.

import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalService, startService } from "../../../scripts/local-service.ts";
import type { ResultDocument } from "../../../src/schema/v1.ts";
import { frontierOf } from "../../../src/shared/frontier.ts";
import { agentCapacitySaturation } from "../../helpers/agent-capacity.ts";
import { launchChromium, newPage, waitReady } from "../../helpers/browser.ts";
import { fasterBy } from "../../helpers/scale.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const OUT = resolve(ROOT, "test-output");
const repo = "acme/dash";

function doc(i: number, scale: number, branch = "main"): ResultDocument {
  const d = JSON.parse(
    readFileSync(resolve(ROOT, "schema/examples/closed-sweep.json"), "utf8"),
  ) as ResultDocument;
  d.repository = repo;
  d.created_at = new Date(Date.UTC(2026, 10, 1, 12) + i * 3_600_000).toISOString();
  d.git = {
    sha: `${i}`.padStart(40, "a"),
    ref: `refs/heads/${branch}`,
    branch,
    base_branch: "main",
    pr_number: branch === "main" ? null : 9,
    workflow_run_id: String(i),
    run_attempt: 1,
  };
  d.testbed = {
    name: "mock-tb",
    gpu: null,
    gpu_count: null,
    engine: "vllm",
    engine_version: "mock",
    engine_flags: null,
    model: "mock-model",
  };
  for (const l of d.levels) fasterBy(l, scale);
  d.requests = null;
  return d;
}

/** Store each document in the service, in order (each must be accepted: 201). */
async function uploadAll(url: string, token: string, docs: readonly ResultDocument[]): Promise<void> {
  for (const d of docs) {
    const r = await fetch(`${url}/api/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(d),
    });
    if (r.status !== 201) throw new Error(`upload refused: ${r.status} ${await r.text()}`);
  }
}

describe.skipIf(process.env.TOKENBENCH_SKIP_BROWSER === "1")("dashboard in headless Chromium", () => {
  let service: LocalService;
  let browser: Browser;
  const errors: string[] = [];

  beforeAll(async () => {
    service = await startService();
    const token = await service.apiToken(repo);
    // 8 stable runs of main, then a 30 % drop that stays (a change point), then one PR run
    const scales = [1, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97, 0.7, 0.71, 0.69, 0.7];
    const seeds = [...scales.map((s, i) => doc(i, s)), doc(scales.length, 0.72, "feature")];
    await uploadAll(service.url, token, seeds);
    browser = await launchChromium();
    mkdirSync(OUT, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  async function open(path: string, width = 1280): Promise<Page> {
    const page = await newPage(browser, width);
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") errors.push(`${path}: ${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`${path}: ${e.message}`));
    await page.goto(`${service.url}${path}`);
    await waitReady(page, service.log, "any");
    return page;
  }

  it("navigates repository -> trends -> run, charts drawn with data, no console errors", {
    timeout: 120_000,
  }, async () => {
    const home = await open("/");
    expect(await home.getAttribute("body", "data-ready")).toBe("true");
    // home: each repository with its headline badge (measure @ level, value) and sparkline
    await home.waitForSelector(`li[data-repo="${repo}"] .badge img`);
    await home.waitForSelector(`li[data-repo="${repo}"] .spark img`);
    await home.screenshot({ path: resolve(OUT, "dashboard-home.png"), fullPage: true });
    await home.click(`a.repo:has-text("${repo}")`);
    await home.waitForURL(`**/r/${repo}`);
    await waitReady(home, service.log);
    // it opens on the highest closed-loop level, where a change shows most
    expect(await home.$eval("select[name='benchmark']", (s) => (s as HTMLSelectElement).value)).toBe(
      "closed c=4",
    );
    await home.waitForSelector(".trend[data-measure='output_tok_s'] svg .mark-line path");
    const symbols = await home.$$eval(
      ".trend[data-measure='output_tok_s'] svg .mark-symbol path",
      (els) => els.length,
    );
    expect(symbols).toBeGreaterThanOrEqual(12); // one point per main run, plus the regression markers
    const band = await home.$$eval(
      ".trend[data-measure='output_tok_s'] svg .mark-rect path",
      (els) => els.length,
    );
    expect(band).toBeGreaterThan(0);
    // the change point (run 9 of main) is found by the service and drawn as a rule
    expect(await home.getAttribute(".trend[data-measure='output_tok_s']", "data-change-points")).toBe("1");
    // human titles with units, a date axis
    const titles = await home.$$eval(".trend svg .role-title-text", (els) => els.map((e) => e.textContent));
    expect(titles).toEqual(expect.arrayContaining(["output tok/s", "TTFT p95"]));
    // runs stored seconds apart: the time axis labels times, each label once (not ten identical dates)
    expect(await home.textContent(".trend[data-measure='output_tok_s'] svg")).toContain("time (UTC)");
    const axes = await home.$$eval(".trend[data-measure='output_tok_s'] svg g.role-axis", (gs) =>
      gs.map((g) => [...g.querySelectorAll(".role-axis-label text")].map((e) => e.textContent ?? "")),
    );
    const times = axes.filter((a) => a.length > 0 && a.every((t) => /^\d\d:\d\d(:\d\d(\.\d{3})?)?$/.test(t)));
    expect(times.length).toBe(1); // one time axis
    expect(times[0]!.length).toBeGreaterThan(2);
    expect(new Set(times[0]).size).toBe(times[0]!.length);
    await home.screenshot({ path: resolve(OUT, "dashboard-repo.png"), fullPage: true });

    // each chart says what its band is drawn from: the last 10 of main's 12 runs (the newest judged)
    const subtitles = await home.$$eval(
      ".trend[data-measure='output_tok_s'] svg .role-title-subtitle",
      (els) => els.map((e) => e.textContent),
    );
    expect(subtitles).toEqual(["band: 10 runs of main"]);
    // choose another benchmark through the form: the page reloads with it
    await home.selectOption("select[name='benchmark']", "closed c=1");
    await home.waitForURL(/benchmark=closed\+c%3D1|benchmark=closed%20c%3D1/);
    await waitReady(home, service.log);
    await home.waitForSelector(".trend[data-measure='ttft_p95_ms'] svg .mark-line path");

    // a PR branch: its point over the base branch's band and points
    const pr = await open(`/r/${repo}?branch=feature`);
    await pr.waitForSelector(".trend[data-measure='output_tok_s'] svg .mark-line path");
    const lines = await pr.$$eval(
      ".trend[data-measure='output_tok_s'] svg .mark-line path",
      (els) => els.length,
    );
    expect(lines).toBeGreaterThanOrEqual(2); // main's line under the branch's
    // main's last 10 runs span its 30 % drop: the band is wide, and the PR's run inside it
    expect(
      await pr.$$eval(".trend[data-measure='output_tok_s'] svg .role-title-subtitle", (els) =>
        els.map((e) => e.textContent),
      ),
    ).toEqual(["band: 10 runs of main"]);
    expect(
      await pr.$$eval(".trend[data-measure='output_tok_s'] svg .mark-rect path", (els) => els.length),
    ).toBeGreaterThan(0);
    await pr.screenshot({ path: resolve(OUT, "dashboard-pr-branch.png"), fullPage: true });
    await pr.close();

    await home.click("table.runs a.run >> nth=0");
    await home.waitForURL(/\/runs\/[0-9a-f]{16}$/);
    await waitReady(home, service.log);
    expect(await home.$$eval("table.levels tbody tr", (els) => els.length)).toBe(2);
    // the run page: verdicts against its baseline, links to the commit, PR and workflow run
    expect(await home.$$eval("table.verdicts tbody tr", (els) => els.length)).toBeGreaterThan(0);
    expect(await home.getAttribute("a.commit", "href")).toMatch(
      /^https:\/\/github\.com\/acme\/dash\/commit\/a+\d+$/,
    );
    expect(await home.getAttribute("a.workflow", "href")).toMatch(/\/actions\/runs\/\d+$/);
    await home.waitForSelector(".curve[data-chart='throughput'] svg .mark-line path");
    const curves = await home.$$eval(".curve svg", (els) => els.length);
    expect(curves).toBeGreaterThanOrEqual(4);
    // the frontier as the service draws it: this run over main's recent runs, not only the newest
    expect(await home.$(".curve[data-chart='frontier']")).toBeNull();
    await home.waitForFunction(
      () => (document.querySelector("img.frontier") as HTMLImageElement | null)?.complete,
    );
    const frontierSvg = await (
      await fetch(`${service.url}${await home.getAttribute("img.frontier", "src")}`)
    ).text();
    expect(frontierSvg.match(/<polyline/g)).toHaveLength(7); // this run and six of main's before it
    await home.screenshot({ path: resolve(OUT, "dashboard-run.png"), fullPage: true });
    await home.close();
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("a service with a READ_TOKEN: the dashboard asks for it, keeps it for the tab, and then shows the data", {
    timeout: 150_000,
  }, async () => {
    const guarded = await startService({ READ_TOKEN: "rt-secret" });
    try {
      const token = await guarded.apiToken(repo);
      const up = await fetch(`${guarded.url}/api/v1/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(doc(0, 1)),
      });
      expect(up.status).toBe(201);
      const page = await newPage(browser);
      await page.goto(`${guarded.url}/`);
      await page.waitForSelector("body[data-ready='token']");
      await page.fill("#read-token", "wrong");
      await page.click("#read-token-form button");
      await page.waitForSelector("body[data-ready='token'] p.error");
      await page.fill("#read-token", "rt-secret");
      await page.click("#read-token-form button");
      await waitReady(page, guarded.log);
      expect(await page.textContent(`a.repo:has-text("${repo}")`)).toContain(repo);
      await page.close();
      // a link that carries the token: used, then removed from the address bar
      const linked = await newPage(browser);
      await linked.goto(`${guarded.url}/r/${repo}#read-token=rt-secret`);
      await waitReady(linked, guarded.log);
      expect(linked.url()).not.toContain("rt-secret");
      await linked.close();
    } finally {
      await guarded.stop();
    }
  });

  it("agent capacity: its benchmark's trend is its own measure, and a run that lost sessions shows the row regressed", {
    timeout: 150_000,
  }, async () => {
    const agentsRepo = "acme/agents";
    const token = await service.apiToken(agentsRepo);
    const withCapacity = (i: number, sessions: number, branch = "main") => {
      const d = doc(100 + i, 1, branch);
      d.repository = agentsRepo;
      d.saturation = agentCapacitySaturation(sessions);
      return d;
    };
    const seeds = [12, 12, 13, 12, 12, 12].map((s, i) => withCapacity(i, s));
    await uploadAll(service.url, token, [...seeds, withCapacity(6, 8, "feature")]);
    const page = await open(
      `/r/${agentsRepo}?benchmark=${encodeURIComponent("agent capacity fast")}&branch=feature`,
    );
    await page.waitForSelector(".trend[data-measure='agent_sessions'] svg .mark-line path");
    expect(await page.$$eval(".trend", (els) => els.map((e) => (e as HTMLElement).dataset.measure))).toEqual([
      "agent_sessions",
    ]);
    const titles = await page.$$eval(".trend svg .role-title-text", (els) => els.map((e) => e.textContent));
    expect(titles).toEqual(["agent capacity"]);
    // the PR's 8 sessions, far under the band of main's 6 runs (12 or 13), ringed as outside it
    const subtitle = await page.$$eval(".trend svg .role-title-subtitle", (els) =>
      els.map((e) => e.textContent),
    );
    expect(subtitle).toEqual(["band: 6 runs of main; ○ 1 outside it"]);
    await page.screenshot({ path: resolve(OUT, "dashboard-agent-capacity.png"), fullPage: true });
    await page.click("table.runs a.run >> nth=0");
    await page.waitForURL(/\/runs\/[0-9a-f]{16}$/);
    await waitReady(page, service.log);
    const row = await page.$$eval("table.verdicts tbody tr", (trs) =>
      trs.map((tr) => tr.textContent ?? "").find((t) => t.includes("agent capacity fast")),
    );
    // against the history of six runs of main (mean 12.2): a third fewer sessions, an interval, regressed
    expect(row).toMatch(/agent capacity fast.*agent capacity \(sessions\).*−34\.2 %.*history-t.*regressed/);
    await page.close();
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("why TTFT moved: a run whose requests queued longer shows the lines and a bar of its parts per side", {
    timeout: 150_000,
  }, async () => {
    const whyRepo = "acme/why";
    const token = await service.apiToken(whyRepo);
    /** Each level's TTFT `queued` ms longer, all of it in the queue part (30 % queue, 65 % prefill, 5 % client before). */
    const split = (i: number, queued: number, branch = "main") => {
      const d = doc(200 + i, 1, branch);
      d.repository = whyRepo;
      for (const l of d.levels) {
        const parts = (t: number) => ({
          n: 10,
          queue_ms: 0.3 * t + queued,
          prefill_ms: 0.65 * t,
          client_ms: 0.05 * t,
          uncached_tokens: 256,
        });
        const [p50, p95] = [l.ttft_ms.p50!, l.ttft_ms.p95!];
        for (const k of ["mean", "min", "max", "p50", "p90", "p95", "p99"] as const)
          l.ttft_ms[k] = l.ttft_ms[k]! + queued;
        l.ttft_split = { source: "server_timings", requests: 100, p50: parts(p50), p95: parts(p95) };
      }
      return d;
    };
    const seeds = [0, 0.4, -0.3, 0.2, -0.1, 0.1].map((q, i) => split(i, q));
    await uploadAll(service.url, token, [...seeds, split(6, 60, "feature")]);
    const page = await open(`/r/${whyRepo}?branch=feature`);
    await page.click("table.runs a.run >> nth=0");
    await page.waitForURL(/\/runs\/[0-9a-f]{16}$/);
    await waitReady(page, service.log);
    const lines = await page.$$eval("section.why li", (lis) => lis.map((li) => li.textContent ?? ""));
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines)
      expect(l).toMatch(
        /^TTFT p(50|95) at c=\d+ \+60\.\d ms: queue \+(59\.9|60\.0), prefill ±0\.0, client ±0\.0.*\(mostly queue\)$/,
      );
    // per figure: the baseline's bar and this run's, on one scale; this run's queue part the wider
    const bars = await page.$$eval("section.why figure.split", (figs) =>
      figs.map((f) =>
        [...f.querySelectorAll(".split-bar")].map((b) => ({
          side: (b as HTMLElement).dataset.side,
          queuePx: (b.querySelector(".part-queue") as HTMLElement).getBoundingClientRect().width,
          prefillPx: (b.querySelector(".part-prefill") as HTMLElement).getBoundingClientRect().width,
        })),
      ),
    );
    expect(bars.length).toBeGreaterThan(0);
    for (const [base, head] of bars) {
      expect([base!.side, head!.side]).toEqual(["base", "head"]);
      expect(head!.queuePx).toBeGreaterThan(base!.queuePx + 20);
      expect(Math.abs(head!.prefillPx - base!.prefillPx)).toBeLessThanOrEqual(1);
    }
    await page.screenshot({ path: resolve(OUT, "dashboard-why.png"), fullPage: true });
    await page.close();
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("the server's start: its benchmark's trends are the start's measures, and a slower start shows the row regressed", {
    timeout: 150_000,
  }, async () => {
    const startRepo = "acme/startup";
    const token = await service.apiToken(startRepo);
    const started = (i: number, readyS: number, branch = "main") => {
      const d = doc(200 + i, 1, branch);
      d.repository = startRepo;
      d.startup = { answered_s: 1, ready_s: readyS };
      return d;
    };
    const seeds = [40, 41, 40, 42, 40, 41].map((s, i) => started(i, s));
    await uploadAll(service.url, token, [...seeds, started(6, 52, "feature")]);
    const page = await open(
      `/r/${startRepo}?benchmark=${encodeURIComponent("server startup")}&branch=feature`,
    );
    await page.waitForSelector(".trend[data-measure='startup_s'] svg .mark-line path");
    expect(await page.$$eval(".trend", (els) => els.map((e) => (e as HTMLElement).dataset.measure))).toEqual([
      "startup_s",
      "startup_first_token_s",
      "startup_warm_s",
    ]);
    // the start the runs measured is drawn; the ones they did not measure say so
    const empty = await page.$$eval(".trend p.empty", (els) => els.map((e) => e.textContent));
    expect(empty).toEqual(["no data", "no data"]);
    // the PR's 52 s start, far over the band of main's six (40 to 42 s), ringed as outside it
    const subtitle = await page.$$eval(".trend svg .role-title-subtitle", (els) =>
      els.map((e) => e.textContent),
    );
    expect(subtitle).toEqual(["band: 6 runs of main; ○ 1 outside it"]);
    await page.screenshot({ path: resolve(OUT, "dashboard-startup.png"), fullPage: true });
    await page.click("table.runs a.run >> nth=0");
    await page.waitForURL(/\/runs\/[0-9a-f]{16}$/);
    await waitReady(page, service.log);
    const row = await page.$$eval("table.verdicts tbody tr", (trs) =>
      trs.map((tr) => tr.textContent ?? "").find((t) => t.includes("server startup")),
    );
    // against six runs of main (mean 40.7 s): +27.9 %, an interval, regressed
    expect(row).toMatch(/server startup.*\+27\.9 %.*history-t.*regressed/);
    await page.close();
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("a pull request's own page: its verdict, its runs on main's trends of throughput and TTFT p95 with main's band, its runs", {
    timeout: 150_000,
  }, async () => {
    const prRepo = "acme/pr";
    const token = await service.apiToken(prRepo);
    const run = (i: number, scale: number, branch = "main") => {
      const d = { ...doc(300 + i, scale, branch), repository: prRepo };
      return { ...d, frontier: frontierOf(d) };
    };
    const seeds = [1, 1.02, 0.98, 1.01, 0.99, 1.0].map((x, i) => run(i, x));
    await uploadAll(service.url, token, [...seeds, run(6, 0.8, "feature"), run(7, 0.79, "feature")]);
    const page = await open(`/r/${prRepo}/pull/9`);
    await waitReady(page, service.log);
    await page.waitForSelector(".trend[data-measure='ttft_p95_ms'] svg .mark-line path");
    expect(await page.textContent("h1")).toBe("PR #9");
    // the newest run's verdict first, regressed against main
    expect(Number(await page.getAttribute("section.verdict", "data-regressed"))).toBeGreaterThan(0);
    // the key measures at the highest closed level, the PR's two runs outside main's band
    const top = Math.max(...seeds[0]!.levels.map((l) => l.level));
    expect(await page.textContent("#body > h2")).toBe(`On main's trend: closed c=${top}`);
    expect(await page.$$eval(".trend", (els) => els.map((e) => (e as HTMLElement).dataset.measure))).toEqual([
      "output_tok_s",
      "ttft_p95_ms",
    ]);
    const subtitles = await page.$$eval(".trend svg .role-title-subtitle", (els) =>
      els.map((e) => e.textContent),
    );
    expect(subtitles).toEqual([
      "band: 6 runs of main; ○ 2 outside it",
      "band: 6 runs of main; ○ 2 outside it",
    ]);
    expect(await page.$$eval("ul.pr-runs li", (els) => els.length)).toBe(2);
    // the newest run's frontier over main's runs its verdict read, drawn by the service
    await page.waitForFunction(
      () => (document.querySelector("img.frontier") as HTMLImageElement | null)?.complete,
    );
    expect(await page.$eval("img.frontier", (img) => (img as HTMLImageElement).naturalWidth)).toBe(640);
    const svg = await (await fetch(`${service.url}${await page.getAttribute("img.frontier", "src")}`)).text();
    expect(svg.match(/<polyline/g)).toHaveLength(7); // the PR's newest run and main's six
    // a page of its own, not the newest run's page
    expect(await page.$("#curves")).toBeNull();
    await page.screenshot({ path: resolve(OUT, "dashboard-pull.png"), fullPage: true });
    await page.close();
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("is readable on a phone: no horizontal overflow", { timeout: 150_000 }, async () => {
    const page = await open(`/r/${repo}`, 375);
    await page.waitForSelector(".trend svg .mark-line path");
    await page.screenshot({ path: resolve(OUT, "dashboard-phone.png"), fullPage: true });
    const overflow = await page.evaluate(() => {
      const w = document.documentElement.clientWidth;
      const wide = [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > w + 1)
        .slice(0, 5)
        .map((e) => `${e.tagName}.${(e as HTMLElement).className}`);
      return { by: document.documentElement.scrollWidth - w, wide };
    });
    expect(overflow.by, overflow.wide.join(", ")).toBeLessThanOrEqual(1);
    await page.close();
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("names with bidirectional controls cannot reorder the page: written out, and links and filters still work", {
    timeout: 120_000,
  }, async () => {
    const bidiRepo = "acme/bidi";
    const token = await service.apiToken(bidiRepo);
    const d = doc(100, 1);
    d.repository = bidiRepo;
    d.target.model = "llama\u202Etxt.exe";
    d.testbed = { ...d.testbed!, name: "gpu\u2066box\u2069\u200B", model: "llama\u202Etxt.exe" };
    const up = await fetch(`${service.url}/api/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(d),
    });
    expect(up.status).toBe(201);
    const { run } = (await up.json()) as { run: { id: string } };
    const page = await open(`/runs/${run.id}`);
    const text = await page.evaluate(() => document.body.textContent ?? "");
    expect(text).not.toMatch(/[\p{Cf}]/u);
    expect(text).toContain("llama[U+202E]txt.exe");
    expect(text).toContain("testbed gpu[U+2066]box[U+2069][U+200B]");
    await page.close();
    // the trends page: the testbed filter shows the name written out and still selects its data
    const trends = await open(`/r/${bidiRepo}`);
    expect(await trends.evaluate(() => document.body.textContent ?? "")).not.toMatch(/[\p{Cf}]/u);
    const option = await trends.$eval('select[name="testbed"] option', (o) => o.textContent);
    expect(option).toContain("gpu[U+2066]box[U+2069][U+200B]");
    await trends.waitForSelector(".trend[data-measure='output_tok_s'] svg"); // "no data" if the filter broke
    expect(await trends.$$eval(".trend[data-measure='output_tok_s'] .empty", (els) => els.length)).toBe(0);
    await trends.close();
    expect(errors, errors.join("\n")).toEqual([]);
  });

  it("an unknown run shows the error, not a blank page", { timeout: 120_000 }, async () => {
    const page = await open("/runs/0000000000000000");
    expect(await page.getAttribute("body", "data-ready")).toBe("error");
    expect(await page.textContent(".error")).toContain("run_not_found");
    await page.close();
    errors.length = 0; // the failed fetch logs a console error by design
  });

  it("a service that never answers one call: after a minute the page names the call, not a blank page", {
    timeout: 150_000,
  }, async () => {
    const page = await newPage(browser);
    // the run's own document never comes back; everything else is the real service
    await page.route(/\/api\/v1\/runs\/[0-9a-f]{16}$/, () => {});
    const t0 = Date.now();
    await page.goto(`${service.url}/runs/0000000000000001`);
    await waitReady(page, service.log, "error");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(60_000);
    expect(await page.textContent(".error")).toBe(
      "the results service did not answer /api/v1/runs/0000000000000001 within 60 s: check that it is running (its log names each request it served), then reload the page",
    );
    await page.close();
    errors.length = 0;
  });
});
