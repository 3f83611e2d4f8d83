import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type LocalService, startService } from "../../../scripts/local-service.ts";
import { node24, runAction as runActionBundle } from "../../../scripts/run-action.ts";
import { stickyMarker } from "../../../src/action/comment.ts";
import { compareDocuments } from "../../../src/core/documents/compare.ts";
import { readResults } from "../../../src/core/results/files.ts";
import { type MockServer, start } from "../../../src/mock/index.ts";
import { parseResultDocument } from "../../../src/schema/v1.ts";
import { startGitHubApi } from "../../helpers/github-api.ts";
import { toleranceFor } from "../../helpers/shard-tolerance.ts";
import { zip } from "../../helpers/zip.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const NODE = node24();
const NODE24 = NODE !== process.execPath;

/** Each call is its own workflow run unless a test names one: the service takes (run id, attempt,
 * testbed, shard) as an upload's identity and refuses a second, different document for it. */
let nextRunId = 4242;

/** dist/index.js as a runner runs it, with the runner variables every test here shares. */
async function runAction(
  inputs: Record<string, string>,
  github: Record<string, string>,
  payload: unknown,
  opts: { env?: Record<string, string>; workspace?: string } = {},
) {
  const runId = github.GITHUB_RUN_ID ?? String(nextRunId++);
  const r = await runActionBundle(
    inputs,
    {
      GITHUB_SERVER_URL: "https://github.example",
      GITHUB_RUN_ID: runId,
      GITHUB_RUN_ATTEMPT: "1",
      RUNNER_NAME: "gpu-runner-1",
      RUNNER_OS: "Linux",
      ...github,
    },
    payload,
    { env: opts.env ?? {}, ...(opts.workspace ? { workspace: opts.workspace } : {}) },
  );
  return { ...r, stdout: r.log, runId };
}

describe(`the Action (dist/index.js under node ${NODE24 ? "24 from npm" : process.version})`, () => {
  let mock: MockServer;
  let service: LocalService;
  let gh: Awaited<ReturnType<typeof startGitHubApi>>;
  let apiToken: string;
  const ghRuns: NonNullable<Parameters<typeof startGitHubApi>[0]>["runs"] = [];
  const repo = "acme/infer";
  const base = () => ({
    "base-url": mock.url,
    levels: "1,2",
    requests: "8",
    "max-tokens": "8",
    "prompt-tokens": "16",
    warmup: "0",
    // the suite loads this machine beside the runs: a client read late is not what these test
    "client-late-floor-ms": "60",
    // short levels of a fast mock: a steady window of 50 ms is steady enough to judge them
    "min-steady-s": "0.05",
    "metrics-interval-ms": "100",
    testbed: "ci-mock",
    "results-url": service.url,
    "api-token": apiToken,
    "github-token": "ghs_test",
  });
  const ghEnv = (over: Record<string, string> = {}) => ({
    GITHUB_REPOSITORY: repo,
    GITHUB_API_URL: gh.url,
    GITHUB_EVENT_NAME: "push",
    GITHUB_REF: "refs/heads/main",
    GITHUB_SHA: "1111111111111111111111111111111111111111",
    ...over,
  });
  const prPayload = (fork = false) => ({
    pull_request: {
      number: 7,
      head: {
        sha: "2222222222222222222222222222222222222222",
        ref: "feature",
        repo: { full_name: fork ? "someone/infer" : repo, fork },
      },
      base: { ref: "main", repo: { full_name: repo } },
    },
  });
  const prEnv = () =>
    ghEnv({
      GITHUB_EVENT_NAME: "pull_request",
      GITHUB_REF: "refs/pull/7/merge",
      GITHUB_SHA: "9999999999999999999999999999999999999999",
      GITHUB_HEAD_REF: "feature",
      GITHUB_BASE_REF: "main",
    });

  beforeAll(async () => {
    [mock, service, gh] = await Promise.all([
      start({ ttftMs: 5, itlMs: 2 }),
      startService(),
      startGitHubApi({
        runs: ghRuns,
        pulls: [
          {
            number: 7,
            head: { sha: "3333333333333333333333333333333333333333", label: "someone:feature" },
            base: { ref: "main" },
          },
        ],
      }),
    ]);
    apiToken = await service.apiToken(repo);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([mock?.close(), service?.stop(), gh?.close()]);
  });

  it("push to main: results file, summary, outputs, upload; no comment", { timeout: 60_000 }, async () => {
    const r = await runAction(base(), ghEnv(), {});
    expect(r.code, r.stdout).toBe(0);
    const doc = parseResultDocument(JSON.parse(readFileSync(r.outputs["results-path"]!, "utf8")));
    expect(doc.repository).toBe(repo);
    expect(doc.git).toMatchObject({
      sha: "1111111111111111111111111111111111111111",
      branch: "main",
      workflow_run_id: r.runId,
      run_attempt: 1,
      pr_number: null,
    });
    expect(doc.testbed?.name).toBe("ci-mock");
    expect(doc.environment.runner_name).toBe("gpu-runner-1");
    expect(doc.requests!.length).toBeGreaterThan(0); // per-request records kept for the artifact
    expect(r.outputs["run-url"]).toMatch(new RegExp(`^${service.url}/runs/[0-9a-f]{16}$`));
    expect(r.outputs["regression-count"]).toBe("0");
    expect(r.outputs.markdown).toContain("### tokenbench: mock-model");
    expect(r.summary).toContain("| benchmark | measure | baseline | head |");
    expect(r.stdout).toContain("no ACTIONS_RUNTIME_TOKEN");
    expect(r.stdout).toContain("nvidia-smi not found");
    const runs = (await (await fetch(`${service.url}/api/v1/repos/${repo}/runs`)).json()) as {
      runs: { commit_sha: string }[];
    };
    expect(runs.runs[0]!.commit_sha).toBe("1111111111111111111111111111111111111111");
    expect(gh.requests).toHaveLength(0);
  });

  it("pull request: the PR head sha, a comment created once and then updated in place", {
    timeout: 90_000,
  }, async () => {
    for (let i = 0; i < 2; i++) await runAction(base(), ghEnv({ GITHUB_SHA: `${i}`.repeat(40) }), {});
    const before = gh.requests.length;
    const r1 = await runAction(base(), prEnv(), prPayload());
    expect(r1.code, r1.stdout).toBe(0);
    const doc = parseResultDocument(JSON.parse(readFileSync(r1.outputs["results-path"]!, "utf8")));
    expect(doc.git).toMatchObject({
      sha: "2222222222222222222222222222222222222222",
      branch: "feature",
      base_branch: "main",
      pr_number: 7,
    });
    expect(gh.comments).toHaveLength(1);
    expect(gh.comments[0]!.body.startsWith(stickyMarker("ci-mock", "closed 1,2"))).toBe(true);
    // the service judged it against main: the evidence line names the runs and the methods
    expect(gh.comments[0]!.body).toMatch(
      /measures judged against (the last run of main|\d+ runs of main); head: one run; methods: /,
    );
    expect(gh.comments[0]!.body).toContain("per level: baseline → head");
    expect(gh.comments[0]!.body).toContain(`https://github.example/acme/infer/actions/runs/${r1.runId}`);
    const r2 = await runAction(base(), prEnv(), prPayload());
    expect(r2.code, r2.stdout).toBe(0);
    expect(gh.comments).toHaveLength(1);
    const methods = gh.requests.slice(before).map((q) => q.method);
    expect(methods.filter((m) => m === "POST")).toHaveLength(1);
    expect(methods.filter((m) => m === "PATCH")).toHaveLength(1);
    expect(gh.requests.at(-1)!.auth).toBe("Bearer ghs_test");
  });

  it("fork PR: the comment is skipped with a notice; a workflow_run job publishes it", {
    timeout: 60_000,
  }, async () => {
    const before = gh.requests.length;
    const r = await runAction({ ...base(), "results-url": "" }, prEnv(), prPayload(true));
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/::notice::pull request from a fork/);
    expect(gh.requests.length).toBe(before);
    // stage two: trusted, measures nothing, publishes the first job's results
    const pub = await runAction(
      {
        "publish-results": r.outputs["results-path"]!,
        "results-url": service.url,
        "api-token": apiToken,
        "github-token": "ghs_test",
        testbed: "ci-mock",
      },
      ghEnv({ GITHUB_EVENT_NAME: "workflow_run", GITHUB_REF: "refs/heads/main" }),
      {
        workflow_run: {
          head_sha: "2222222222222222222222222222222222222222",
          head_branch: "feature",
          pull_requests: [{ number: 7, base: { ref: "main" } }],
        },
      },
      { workspace: r.dir },
    );
    expect(pub.code, pub.stdout).toBe(0);
    expect(pub.stdout).not.toContain("sweep");
    expect(pub.outputs["run-url"]).toMatch(/\/runs\/[0-9a-f]{16}$/);
    expect(gh.requests.slice(before).map((q) => q.method)).toContain("PATCH"); // the sticky comment of PR 7
    expect(gh.comments).toHaveLength(1);
  });

  it("publish-results trusts the event, not the artifact: a forged PR number, branch and date are ignored or refused", {
    timeout: 90_000,
  }, async () => {
    const r = await runAction({ ...base(), "results-url": "" }, prEnv(), prPayload(true));
    expect(r.code, r.stdout).toBe(0);
    const path = r.outputs["results-path"]!;
    const forged = JSON.parse(readFileSync(path, "utf8"));
    forged.repository = "acme/infer";
    forged.git = { ...forged.git, pr_number: 999, branch: "main", base_branch: "main", sha: "f".repeat(40) };
    forged.testbed = { ...forged.testbed, name: "ci-mock-forged" };
    const forgedPath = join(resolve(path, ".."), "forged.json");
    writeFileSync(forgedPath, JSON.stringify(forged));
    const before = gh.requests.length;
    // A fork's PR: GitHub leaves workflow_run.pull_requests empty; the PR is found through the API.
    const event = {
      workflow_run: {
        id: 5151,
        run_attempt: 2,
        head_sha: "3333333333333333333333333333333333333333",
        head_branch: "feature",
        head_repository: { full_name: "someone/infer", owner: { login: "someone" } },
        pull_requests: [],
      },
    };
    const pub = await runAction(
      {
        "publish-results": forgedPath,
        "results-url": service.url,
        "api-token": apiToken,
        "github-token": "ghs_test",
        testbed: "ci-mock",
      },
      ghEnv({ GITHUB_EVENT_NAME: "workflow_run", GITHUB_REF: "refs/heads/main" }),
      event,
      { workspace: r.dir },
    );
    expect(pub.code, pub.stdout).toBe(0);
    const paths = gh.requests.slice(before).map((q) => `${q.method} ${q.path}`);
    expect(paths).toContain("GET /repos/acme/infer/pulls");
    expect(paths.some((p) => p.includes("/issues/7/comments"))).toBe(true);
    expect(paths.some((p) => p.includes("/999/"))).toBe(false);
    const runId = pub.outputs["run-url"]!.split("/").at(-1)!;
    const answer = await fetch(`${service.url}/api/v1/runs/${runId}`);
    const stored = (await answer.json()) as {
      run: { branch: string; pr_number: number; commit_sha: string; workflow_run_id: string };
    };
    expect(stored.run).toMatchObject({
      branch: "someone:feature",
      pr_number: 7,
      commit_sha: "3333333333333333333333333333333333333333",
      workflow_run_id: "5151",
    });
    // A date from the far future is refused before anything is uploaded.
    writeFileSync(forgedPath, JSON.stringify({ ...forged, created_at: "9999-12-31T00:00:00.000Z" }));
    const future = await runAction(
      {
        "publish-results": forgedPath,
        "results-url": service.url,
        "api-token": apiToken,
        testbed: "ci-mock",
      },
      ghEnv({ GITHUB_EVENT_NAME: "workflow_run", GITHUB_REF: "refs/heads/main" }),
      event,
      { workspace: r.dir },
    );
    expect(future.code).toBe(1);
    expect(future.stdout).toMatch(
      /::error::input "publish-results": .*forged\.json is refused: created_at: 9999-12-31/,
    );
  });

  it("results service down: a warning, results still written; fail-on-upload-error fails", {
    timeout: 90_000,
  }, async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const r = await runAction({ ...base(), "results-url": dead }, ghEnv(), {});
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/::warning::upload to .* failed after 4 attempt\(s\): network error/);
    expect(existsSync(r.outputs["results-path"]!)).toBe(true);
    expect(r.outputs["run-url"]).toBe("");
    const f = await runAction(
      { ...base(), "results-url": dead, "fail-on-upload-error": "true" },
      ghEnv(),
      {},
    );
    expect(f.code).toBe(1);
    expect(f.stdout).toMatch(/::error::upload to .* failed/);
  });

  it("fail-on-regression: a slower server on a PR fails the step and counts the regressions", {
    timeout: 60_000,
  }, async () => {
    const slow = await start({ ttftMs: 25, itlMs: 8 });
    try {
      const r = await runAction(
        { ...base(), "base-url": slow.url, "fail-on-regression": "true" },
        prEnv(),
        prPayload(),
      );
      expect(r.code, r.stdout).toBe(1);
      expect(Number(r.outputs["regression-count"])).toBeGreaterThan(0);
      // the job's failure is the headline, with what it failed on
      expect(r.stdout).toMatch(
        /::error::(Gate failed|Not gated|Gate cannot judge)[^\n]*regressed[^\n]*\(fail-on: warning/,
      );
      expect(r.outputs.markdown).toContain("🔴 regressed");
      // thresholds: loose own rules for the measures that moved, so nothing gating regressed
      const rules =
        "ttft_p50_ms=+10000%, ttft_p95_ms=+10000%, itl_p50_ms=+10000%, tpot_p50_ms=+10000%, output_tok_s=-99%, goodput_req_s=-99%, *=t-test";
      const pass = await runAction(
        { ...base(), "base-url": slow.url, thresholds: rules, "fail-on": "regression" },
        prEnv(),
        prPayload(),
      );
      expect(pass.code, pass.stdout).toBe(0);
      const warn = await runAction(
        { ...base(), "base-url": slow.url, thresholds: "*=+1%", "fail-on": "warning" },
        prEnv(),
        prPayload(),
      );
      expect(warn.code, warn.stdout).toBe(1);
      expect(warn.stdout).toMatch(/::error::[^\n]*\(fail-on: warning/);
      const bad = await runAction({ ...base(), thresholds: "ttft_p95_ms=-5%" }, prEnv(), prPayload());
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/::error::input "thresholds": rule for ttft_p95_ms/);
    } finally {
      await slow.close();
    }
  });

  it("a bad input fails the step with a message naming the input", async () => {
    const r = await runAction({ ...base(), levels: "1,x" }, ghEnv(), {});
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('::error::input "levels": must be a comma-separated list');
    const r2 = await runAction({ ...base(), "extra-body": "{bad" }, ghEnv(), {});
    expect(r2.stdout).toContain('::error::input "extra-body"');
  });

  it("a results-dir that is a symbolic link out of the workspace is refused before anything is sent", async () => {
    const ws = mkdtempSync(join(tmpdir(), "tokenbench-ws-link-"));
    const outside = mkdtempSync(join(tmpdir(), "tokenbench-outside-"));
    symlinkSync(outside, join(ws, "results"));
    const sent = mock.stats().requests;
    const r = await runAction({ ...base(), "results-dir": "results" }, ghEnv(), {}, { workspace: ws });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/::error::\[path_outside\] input "results-dir": "results" leads outside/);
    expect(readdirSync(outside)).toEqual([]);
    expect(mock.stats().requests).toBe(sent);
  });

  it("server-command: started, waited for, stopped in the post step", { timeout: 60_000 }, async () => {
    const port = await freePort();
    const cli = resolve(ROOT, "bin/tokenbench.js");
    const cmd = `exec ${process.execPath} ${cli} mockserver --port ${port} --ttft-ms 5 --itl-ms 1 --load-time-s 0.5`;
    const r = await runAction(
      { ...base(), "base-url": `http://127.0.0.1:${port}`, "server-command": cmd, "results-url": "" },
      ghEnv(),
      {},
    );
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/started the inference server \(pid \d+\)/);
    expect(r.stdout).toMatch(/server ready after/);
    // its start, measured: an answer (503 while loading) before ready, ready after the mock's own
    // 0.5 s of loading (which begins after its process starts, so never sooner)
    const doc = parseResultDocument(JSON.parse(readFileSync(join(r.dir, "results", "results.json"), "utf8")));
    expect(doc.startup!.ready_s).toBeGreaterThanOrEqual(0.5);
    expect(doc.startup!.answered_s!).toBeGreaterThan(0);
    expect(doc.startup!.answered_s!).toBeLessThanOrEqual(doc.startup!.ready_s);
    expect(doc.startup!.ready_s).toBeLessThan(30);
    const pid = /server-pid<<(\S+)\n(\d+)\n/.exec(r.state)![2]!;
    const post = await runAction(
      {},
      ghEnv(),
      {},
      {
        env: {
          STATE_isPost: "true",
          "STATE_server-pid": pid,
          "STATE_server-log": join(r.dir, "results", "server.log"),
        },
      },
    );
    expect(post.code, post.stdout).toBe(0);
    expect(post.stdout).toMatch(/inference server \(pid \d+\) stopped/);
    expect(post.stdout).toContain("listening on");
  });

  it("server-command that exits at once: the step fails in seconds with its exit code and log tail", {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const t0 = performance.now();
    const r = await runAction(
      {
        ...base(),
        "base-url": `http://127.0.0.1:${port}`,
        "server-command": "echo 'CUDA error: out of memory' >&2; exit 3",
        "ready-timeout-s": "600",
        "results-url": "",
      },
      ghEnv(),
      {},
    );
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/::error::\[server_exited\] the server command exited with code 3/);
    expect(r.stdout).toContain("CUDA error: out of memory");
    expect((performance.now() - t0) / 1000).toBeLessThan(30);
  });

  it("a matrix: two shard jobs of the bundle, then a merge job that uploads the whole run", {
    timeout: 120_000,
  }, async () => {
    const startAt = String(Date.now() + 4000);
    const shardInputs = (i: number) => ({
      ...base(),
      levels: "2,4",
      requests: "8",
      workers: "1",
      shard: `${i}/2`,
      "start-at": startAt,
      "level-slot-s": "3",
    });
    const before = gh.requests.length;
    // one workflow run: the shard jobs and the merge job share its id
    const matrixRun = ghEnv({ GITHUB_RUN_ID: "9090" });
    const [s1, s2] = await Promise.all([1, 2].map((i) => runAction(shardInputs(i), matrixRun, {})));
    for (const s of [s1!, s2!]) {
      expect(s.code, s.stdout).toBe(0);
      expect(s.stdout).toMatch(/::notice::shard [12]\/2: results kept in .* for the merge job/);
    }
    expect(gh.requests.length).toBe(before); // a shard comments nothing
    // the merge job's workspace holds the shards' results, as download-artifact leaves them
    const mergeWorkspace = mkdtempSync(join(tmpdir(), "tokenbench-merge-ws-"));
    for (const [i, s] of [s1!, s2!].entries()) {
      mkdirSync(join(mergeWorkspace, `shard-${i + 1}`));
      copyFileSync(s.outputs["results-path"]!, join(mergeWorkspace, `shard-${i + 1}`, "results.json"));
    }
    const merged = await runAction(
      {
        "merge-results": "shard-1/results.json,shard-2/results.json",
        // two shard processes on one loaded 2-core machine: their first sends can be 50+ ms apart,
        // and as far apart as their own records say they started late or stalled
        "clock-tolerance-ms": String(
          Math.max(
            500,
            Number(
              toleranceFor(...[s1!, s2!].map((s) => ({ doc: readResults(s.outputs["results-path"]!).doc }))),
            ),
          ),
        ),
        "results-url": service.url,
        "api-token": apiToken,
        testbed: "ci-mock",
      },
      matrixRun,
      {},
      { workspace: mergeWorkspace },
    );
    expect(merged.code, merged.stdout).toBe(0);
    expect(merged.stdout).toMatch(/merged 2 shards \(\d+ requests\)/);
    const runId = merged.outputs["run-url"]!.split("/").at(-1)!;
    const answer = await fetch(`${service.url}/api/v1/runs/${runId}`);
    const stored = (await answer.json()) as {
      document: { levels: { level: number; requests: number }[]; load_generator: { merged_from: string[] } };
      points: unknown[];
    };
    expect(answer.status, `${merged.stdout.slice(-1500)}\n${JSON.stringify(stored).slice(0, 500)}`).toBe(200);
    expect(stored.document.levels.map((l) => [l.level, l.requests])).toEqual([
      [2, 8],
      [4, 8],
    ]);
    expect(stored.document.load_generator.merged_from).toHaveLength(2);
    expect(stored.points.length).toBeGreaterThan(0);
  });

  it("baseline without a service: a results file, or the base branch's artifact; the verdicts the shared compare gives", {
    timeout: 120_000,
  }, async () => {
    const onMain = await runAction({ ...base(), "results-url": "" }, ghEnv(), {});
    expect(onMain.code, onMain.stdout).toBe(0);
    const basePath = onMain.outputs["results-path"]!;
    const baseDoc = parseResultDocument(JSON.parse(readFileSync(basePath, "utf8")));
    const expected = (r: { outputs: Record<string, string> }) => {
      const head = parseResultDocument(JSON.parse(readFileSync(r.outputs["results-path"]!, "utf8")));
      return compareDocuments([{ id: "base", doc: baseDoc }], { id: "head", doc: head }).counts.regressed;
    };
    const slow = await start({ ttftMs: 25, itlMs: 8 });
    try {
      const pr = { ...base(), "base-url": slow.url, "results-url": "", "fail-on": "warning" };
      const viaFile = await runAction({ ...pr, baseline: basePath }, prEnv(), prPayload(), {
        workspace: onMain.dir,
      });
      expect(viaFile.stdout).toContain(`compared against the file ${basePath}`);
      expect(Number(viaFile.outputs["regression-count"])).toBe(expected(viaFile));
      expect(Number(viaFile.outputs["regression-count"])).toBeGreaterThan(0);
      expect(viaFile.code).toBe(1);
      expect(viaFile.outputs.markdown).toMatch(
        /measures judged against the file \S+results\.json; head: one run; methods: [^.]*bootstrap, within one run \d+/,
      );
      // the head line names the file it was judged against, not a branch it never read
      expect(viaFile.outputs.markdown).toMatch(/, against the file \S+results\.json\./);
      expect(viaFile.outputs.markdown).not.toMatch(/against <code>main<\/code>/);
      // the same baseline as the newest successful run's artifact on main
      ghRuns!.push({
        id: 777,
        name: "bench",
        branch: "main",
        head_sha: "1".repeat(40),
        artifacts: [
          { id: 55, name: "tokenbench-results", zip: zip({ "results.json": readFileSync(basePath) }) },
        ],
      });
      // newer, and named main too: a fork's pull request run whose artifact claims a far slower base
      // ("12 improved"), and this repository's own pull request run from a branch called main
      const planted = JSON.parse(readFileSync(basePath, "utf8"));
      for (const l of planted.levels) l.output_tok_s /= 3;
      ghRuns!.unshift(
        {
          id: 901,
          name: "bench",
          branch: "main",
          head_sha: "9".repeat(40),
          event: "pull_request",
          head_repository: "mallory/fork",
          artifacts: [
            { id: 91, name: "tokenbench-results", zip: zip({ "results.json": JSON.stringify(planted) }) },
          ],
        },
        {
          id: 902,
          name: "bench",
          branch: "main",
          head_sha: "8".repeat(40),
          event: "pull_request",
          artifacts: [
            { id: 92, name: "tokenbench-results", zip: zip({ "results.json": JSON.stringify(planted) }) },
          ],
        },
      );
      const viaArtifact = await runAction(
        { ...pr, baseline: "artifact" },
        // (@actions/artifact downloads only outside GHES; the stand-in API is reached through GITHUB_API_URL)
        { ...prEnv(), GITHUB_WORKFLOW: "bench", GITHUB_SERVER_URL: "https://github.com" },
        prPayload(),
      );
      expect(viaArtifact.stdout).toContain(
        "compared against the tokenbench-results artifact of run 777 on main (1111111)",
      );
      expect(viaArtifact.outputs.markdown).toContain(
        ", against the tokenbench-results artifact of run 777 on main &#40;1111111&#41;.",
      );
      expect(Number(viaArtifact.outputs["regression-count"])).toBe(expected(viaArtifact));
      expect(viaArtifact.code).toBe(1);
      // a baseline of another workload is no baseline (the same on every surface), the field named
      const other = await runAction({ ...pr, "max-tokens": "6", baseline: basePath }, prEnv(), prPayload(), {
        workspace: onMain.dir,
      });
      expect(other.code, other.stdout).toBe(0);
      expect(other.stdout).toMatch(
        /::warning::the baseline .* measured another workload \(max_tokens 8 vs 6\): it is no baseline for this run/,
      );
      expect(other.outputs.markdown).toContain(
        "No baseline: the base measured another workload &#40;max&#95;tokens 8 vs 6&#41;",
      );
      // a baseline file outside the workspace: refused, and the comment says why, not "none given"
      const outside = await runAction(
        { ...pr, "fail-on": "never", baseline: basePath },
        prEnv(),
        prPayload(),
      );
      expect(outside.code, outside.stdout).toBe(0);
      expect(outside.stdout).toMatch(
        /::warning::baseline: \[path_outside\] input "baseline": .* leads outside/,
      );
      expect(outside.outputs.markdown).toMatch(
        /No baseline: baseline: &#91;path&#95;outside&#93; input &#34;baseline&#34;: .* leads outside/,
      );
      expect(outside.outputs.markdown).not.toContain("no baseline file was given");
      // where a failure could be decided only with it, the step fails with the same words
      const failing = await runAction({ ...pr, baseline: basePath }, prEnv(), prPayload());
      expect(failing.code).toBe(1);
      expect(failing.stdout).toMatch(
        /::error::baseline: \[path_outside\] .* leads outside .*\(fail-on: warning cannot be decided without it\)/,
      );
    } finally {
      await slow.close();
    }
  });
});
