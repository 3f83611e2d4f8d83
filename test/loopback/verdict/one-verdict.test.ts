/// <reference lib="dom" />
// One pair of runs, one verdict: the same base and head files judged by `tokenbench compare`, by
// the Action with the file as its baseline, by the Action against the results service (the base
// uploaded as a run of main), by the service's compare endpoint, on the dashboard's run page in
// headless Chromium and on the badge. Every surface must show the same rows (benchmark, measure,
// figures, change, interval, method, verdict) and the same counts, with the same `thresholds`
// (the publishing job's: rules planted in the head's artifact are not believed) and a level only
// the head ran (a row without a baseline everywhere, never a refusal).
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalService, startService } from "../../../scripts/local-service.ts";
import { runAction } from "../../../scripts/run-action.ts";
import { start } from "../../../src/mock/index.ts";
import type { CompareResponse } from "../../../src/shared/api-types.ts";
import type { VerdictRow } from "../../../src/shared/verdict.ts";
import {
  deltaText,
  formatValue,
  intervalText,
  measureName,
  methodText,
  verdictWord,
} from "../../../src/shared/verdict-text.ts";
import { SHIELDS_COLORS } from "../../../src/worker/badge.ts";
import { launchChromium, newPage, waitReady } from "../../helpers/browser.ts";
import { runCli } from "../../helpers/cli.ts";
import { startGitHubApi } from "../../helpers/github-api.ts";

const repo = "acme/one-verdict";
/** The rules every surface is given (the Action's `thresholds`, the CLI's `--thresholds`). */
const RULES = "ttft_p95_ms=+10%, *=t-test";

/** A row as every surface words it: benchmark | measure | base | head | Δ | interval | method | verdict. */
const wordsOf = (r: VerdictRow) =>
  [
    r.benchmark,
    measureName(r.measure),
    formatValue(r.base),
    formatValue(r.head),
    deltaText(r.delta_pct, r.delta_pp),
    intervalText(r.interval_pp ?? r.interval_pct) || "–",
    methodText(r),
    `${r.decided ? "gate: " : ""}${verdictWord(r)}`,
  ].join(" | ");

const unescapeRefs = (s: string) => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));

/** The comment's "every measure" table, back into the same words. */
function commentRows(md: string): string[] {
  const start = md.indexOf("<details><summary>every measure");
  const block = md.slice(start, md.indexOf("</details>", start));
  return block
    .split("\n")
    .filter((l) => /^\| (closed|open|search|all levels)/.test(l))
    .map((l) => {
      const cells = l.slice(2, -2).split(" | ").map(unescapeRefs);
      const verdict = cells.pop()!;
      const m = /^\S+ (?:<b>gate<\/b>: )?(.+?) <sub>([^<]*)<\/sub>$/.exec(verdict)!;
      const gate = verdict.includes("<b>gate</b>: ") ? "gate: " : "";
      // the sub holds the method, then the rule when it is not the t-test
      return [...cells, m[2]!.replace(/ [+−-]?\d+(\.\d+)?%$| off$/, "") || "–", `${gate}${m[1]}`].join(" | ");
    });
}

describe.skipIf(process.env.TOKENBENCH_SKIP_BROWSER === "1")("one verdict on every surface", () => {
  let service: LocalService;
  let gh: Awaited<ReturnType<typeof startGitHubApi>>;
  let browser: Browser;
  const dir = mkdtempSync(join(tmpdir(), "tokenbench-one-verdict-"));
  const basePath = join(dir, "base.json");
  const headPath = join(dir, "head.json");

  beforeAll(async () => {
    [service, gh] = await Promise.all([startService(), startGitHubApi({ runs: [], pulls: [] })]);
    // The head's server is 15 % slower to first token: some rows regress, most do not. The head
    // also ran a level the base did not (c=8).
    for (const [path, ttftMs, levels] of [
      [basePath, 20, "1,4"],
      [headPath, 23, "1,4,8"],
    ] as const) {
      const mock = await start({ port: 0, ttftMs, itlMs: 3 });
      const r = await runCli([
        "sweep",
        // levels of a few seconds: over a fraction of one, a single pause at the level's start is
        // the loop delay's p99, and the level reads client-bound
        ...["--base-url", mock.url, "--levels", levels, "--requests", "48", "--max-tokens", "16"],
        ...["--warmup", "4", "--min-steady-s", "0.2", "--quiet", "--out", path],
        // the suite loads this machine beside it: what is tested here is that every surface says
        // the same, not the client's lateness (validity.test.ts is)
        ...["--client-late-floor-ms", "60"],
      ]);
      await mock.close();
      expect(r.code, r.stderr).toBe(0);
    }
    // An artifact that would loosen its own rules: the publishing job's are the ones that count.
    const head = JSON.parse(readFileSync(headPath, "utf8"));
    head.verdict_rules = { thresholds: "*=off", gate: "off", fwer_pct: 5, fail_on: "never" };
    writeFileSync(headPath, JSON.stringify(head));
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([service?.stop(), gh?.close()]);
  });

  it("CLI, Action (file and service baselines), API and dashboard: identical rows and counts", {
    timeout: 180_000,
  }, async () => {
    // 1. the terminal
    const cli = await runCli(["compare", basePath, headPath, "--format", "json", "--thresholds", RULES]);
    expect(cli.code, cli.stderr).toBe(0);
    const fromCli = JSON.parse(cli.stdout) as {
      rows: VerdictRow[];
      counts: Record<string, number>;
      headline: string;
    };
    expect(fromCli.rows.some((r) => r.method === "bootstrap")).toBe(true);
    expect(fromCli.rows.some((r) => r.method === "percent")).toBe(true);
    expect(fromCli.rows.find((r) => r.measure === "ttft_p95_ms")!.rule).toBe("+10%");
    // the level only the head ran: rows without a baseline, judged nowhere
    const c8 = fromCli.rows.filter((r) => r.benchmark === "closed c=8");
    expect(c8.length).toBeGreaterThan(5);
    expect(c8.every((r) => r.verdict === "no_baseline")).toBe(true);
    const expected = fromCli.rows.map(wordsOf);

    const token = await service.apiToken(repo);
    const env = (over: Record<string, string>) => ({
      GITHUB_REPOSITORY: repo,
      GITHUB_API_URL: gh.url,
      GITHUB_SERVER_URL: "https://github.example",
      GITHUB_RUN_ATTEMPT: "1",
      RUNNER_NAME: "r1",
      RUNNER_OS: "Linux",
      ...over,
    });
    const pr = {
      GITHUB_EVENT_NAME: "pull_request",
      GITHUB_REF: "refs/pull/3/merge",
      GITHUB_SHA: "9".repeat(40),
      GITHUB_HEAD_REF: "feature",
      GITHUB_BASE_REF: "main",
    };
    const prPayload = {
      pull_request: {
        number: 3,
        head: { sha: "2".repeat(40), ref: "feature", repo: { full_name: repo, fork: false } },
        base: { ref: "main", repo: { full_name: repo } },
      },
    };
    const publish = async (
      file: string,
      inputs: Record<string, string>,
      github: Record<string, string>,
      payload: unknown,
    ) => {
      const ws = mkdtempSync(join(dir, "ws-"));
      copyFileSync(file, join(ws, "results.json"));
      if (inputs.baseline) copyFileSync(inputs.baseline, join(ws, "base.json"));
      const r = await runAction(
        {
          "publish-results": "results.json",
          testbed: "one-verdict",
          "github-token": "ghs_test",
          thresholds: RULES,
          ...inputs,
          ...(inputs.baseline ? { baseline: "base.json" } : {}),
        },
        env(github),
        payload,
        { workspace: ws },
      );
      expect(r.code, r.log).toBe(0);
      return r;
    };

    // 2. the Action with the file as its baseline (no service)
    const viaFile = await publish(
      headPath,
      { baseline: basePath, "results-url": "" },
      { ...pr, GITHUB_RUN_ID: "11" },
      prPayload,
    );
    expect(commentRows(viaFile.outputs.markdown!)).toEqual(expected);
    expect(viaFile.outputs["regression-count"]).toBe(String(fromCli.counts.regressed));

    // 3. the Action against the service: the base is a run of main, the head a run of the PR
    const service_ = { "results-url": service.url, "api-token": token };
    await publish(
      basePath,
      service_,
      {
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: "1".repeat(40),
        GITHUB_RUN_ID: "12",
      },
      {},
    );
    const viaService = await publish(headPath, service_, { ...pr, GITHUB_RUN_ID: "13" }, prPayload);
    expect(commentRows(viaService.outputs.markdown!)).toEqual(expected);
    expect(viaService.outputs["regression-count"]).toBe(String(fromCli.counts.regressed));
    // the headline is word for word the terminal's
    const unescaped = unescapeRefs(viaService.outputs.markdown!);
    expect(unescaped).toContain(`**${fromCli.headline}**`);

    // 4. the service's compare endpoint
    const headId = /\/runs\/([0-9a-f]{16})$/.exec(viaService.outputs["run-url"]!)![1]!;
    const api = (await (
      await fetch(`${service.url}/api/v1/repos/${repo}/compare?head=${headId}`)
    ).json()) as CompareResponse;
    expect(api.rows.map(wordsOf)).toEqual(expected);
    expect(api.counts).toEqual(fromCli.counts);
    expect(api.headline).toBe(fromCli.headline);
    expect(api.rules).toBe(RULES);
    expect(api.judged_with.thresholds).toBe(RULES);

    // 5. the badge of the PR's branch, per row: the verdict its run was judged with
    for (const [benchmark, measure] of [
      ["closed c=4", "ttft_p95_ms"],
      ["closed c=4", "output_tok_s"],
      ["closed c=1", "ttft_p50_ms"],
      ["closed c=8", "ttft_p95_ms"],
    ] as const) {
      const want = fromCli.rows.find((r) => r.benchmark === benchmark && r.measure === measure)!;
      const q = new URLSearchParams({ branch: "feature", benchmark, measure });
      const badge = (await (await fetch(`${service.url}/badge/${repo}.json?${q}`)).json()) as {
        color: string;
      };
      expect(badge.color, `${benchmark} ${measure}: ${want.verdict}`).toBe(SHIELDS_COLORS[want.verdict]);
    }

    // 6. the dashboard's run page, and the PR page that leads to the same run
    for (const path of [`/runs/${headId}`, `/r/${repo}/pull/3`]) {
      const page = await newPage(browser);
      await page.goto(`${service.url}${path}`);
      await waitReady(page, service.log);
      const shown = await page.$$eval("table.verdicts tbody tr", (trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "").join(" | ")),
      );
      expect(shown, path).toEqual(expected);
      expect(await page.textContent("section.verdict .headline")).toBe(fromCli.headline);
      // verdict first: the summary comes before the charts (the run's curves; the PR's trends) and the tables
      const order = await page.evaluate(() => {
        const at = (sel: string) =>
          [...document.querySelectorAll("#body > *")].findIndex((e) => e.matches(sel));
        return [at("section.verdict"), at("#curves, #pr-trends"), at(".scroll")];
      });
      expect(order[0]).toBeLessThan(order[1]!);
      expect(order[1]).toBeLessThan(order[2]!);
      await page.close();
    }
  });
});
