// `npm run demo`: the README's first command. Everything on 127.0.0.1, nothing to configure.
// Starts the mock inference server and the local results service (wrangler dev, local D1,
// migrations applied), runs the Action bundle (dist/index.js) three times as if on `main`, then
// once as if on a pull request against a slower mock, uploading through the Action's own code
// path; prints the PR comment it would post and the dashboard and badge URLs; cleans up.
// `npm run demo -- --serve` keeps the services up afterwards until Ctrl-C.
import { rmSync } from "node:fs";
import { type MockServer, start } from "../src/mock/index.ts";
import { fakeNvidiaSmiPath } from "./fake-gpu.ts";
import { startService } from "./local-service.ts";
import { runAction } from "./run-action.ts";

const serve = process.argv.includes("--serve");
const repo = "demo/tokenbench";
const say = (s: string) => process.stderr.write(`demo: ${s}\n`);

/**
 * The comment as a terminal shows it: GitHub renders its HTML (folded details, escaped brackets
 * in table cells), a terminal would print `<details>` and `&#40;ms&#41;` as they are.
 */
function asText(md: string): string {
  return md
    .replace(/<!--[\s\S]*?-->\n?/g, "")
    .replace(/<\/?(details|summary|sub|sup)[^>]*>/g, "")
    .replace(/<br\s*\/?>/g, "\n")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

const mocks: MockServer[] = [];
say("starting the mock servers and the local results service (wrangler dev + local D1) ...");
const fast = await start({ ttftMs: 60, itlMs: 12, capacity: 16 });
const slow = await start({ ttftMs: 75, itlMs: 15, capacity: 16 });
mocks.push(fast, slow);
const service = await startService().catch(async (err: Error) => {
  await Promise.all(mocks.map((m) => m.close()));
  process.stderr.write(`demo failed: the local results service did not start: ${err.message}\n`);
  process.exit(1);
});
const cleanup = async () => {
  await Promise.all([...mocks.map((m) => m.close()), service.stop()]);
  rmSync(service.persistDir, { recursive: true, force: true });
};
let code = 0;
try {
  const token = await service.apiToken(repo);
  const inputs = (baseUrl: string) => ({
    "base-url": baseUrl,
    levels: "1,4,16,32",
    // 4 s per level, not a count: every level, up to 32 users, has a steady stretch (32 requests
    // at c=32 filled and drained with none between)
    duration: "4",
    "max-tokens": "32",
    "prompt-tokens": "128",
    warmup: "2",
    "slo-ttft-ms": "500",
    "slo-tpot-ms": "20",
    testbed: "demo-mock",
    "results-url": service.url,
    "api-token": token,
    comment: "false",
    "gpu-sample-ms": "100",
    "gpu-hour-cost": "2.50",
  });
  // No GPU here: a fake nvidia-smi that says so in its GPU name (the comment's and the dashboard's
  // testbed), at a known power, so the energy and cost figures have something to show.
  const gpuEnv = (watts: number) => ({
    env: {
      PATH: fakeNvidiaSmiPath(),
      FAKE_SMI_GPUS: `0:${watts}`,
      FAKE_SMI_NAME: "FAKE-GPU (tokenbench demo: not a real nvidia-smi)",
    },
  });
  const github = (over: Record<string, string>) => ({
    GITHUB_REPOSITORY: repo,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_RUN_ATTEMPT: "1",
    RUNNER_NAME: "demo",
    RUNNER_OS: "Linux",
    ...over,
  });
  for (let i = 1; i <= 3; i++) {
    say(`run ${i}/3 as a push to main (mock: TTFT 60 ms, ITL 12 ms, 16 slots) ...`);
    const r = await runAction(
      inputs(fast.url),
      github({
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: `${i}`.repeat(40),
        GITHUB_RUN_ID: String(100 + i),
      }),
      {},
      gpuEnv(350),
    );
    if (r.code !== 0) throw new Error(`the Action failed on main run ${i}:\n${r.log}`);
  }
  say("run 4 as a pull request, against a slower mock (TTFT 75 ms, ITL 15 ms) ...");
  const pr = await runAction(
    inputs(slow.url),
    github({
      GITHUB_EVENT_NAME: "pull_request",
      GITHUB_REF: "refs/pull/1/merge",
      GITHUB_SHA: "f".repeat(40),
      GITHUB_HEAD_REF: "slower",
      GITHUB_BASE_REF: "main",
      GITHUB_RUN_ID: "200",
    }),
    {
      pull_request: {
        number: 1,
        head: { sha: "a".repeat(40), ref: "slower", repo: { full_name: repo, fork: false } },
        base: { ref: "main", repo: { full_name: repo } },
      },
    },
    gpuEnv(420),
  );
  if (pr.code !== 0) throw new Error(`the Action failed on the PR run:\n${pr.log}`);
  process.stdout.write("\n========== the PR comment the Action would post ==========\n\n");
  process.stdout.write(`${asText(pr.outputs.markdown ?? "")}\n`);
  process.stdout.write("\n==========================================================\n\n");
  process.stdout.write(`regressions: ${pr.outputs["regression-count"]}\n`);
  process.stdout.write(`dashboard:   ${service.url}/\n`);
  process.stdout.write(`this run:    ${pr.outputs["run-url"]}\n`);
  process.stdout.write(
    `badge:       ${service.url}/badge/${repo}.svg (JSON: ${service.url}/badge/${repo}.json)\n`,
  );
  process.stdout.write(`sparkline:   ${service.url}/badge/${repo}/sparkline.svg?branch=main\n`);
  if (serve) {
    say("--serve: services stay up; Ctrl-C to stop and clean up");
    await new Promise<void>((res) => process.once("SIGINT", () => res()));
  }
} catch (err) {
  process.stderr.write(`demo failed: ${(err as Error).message}\n`);
  code = 1;
} finally {
  await cleanup();
}
// the links above point at services that are gone now, unless --serve kept them while it ran
if (!serve && code === 0)
  say(
    "the services have stopped, so the links above no longer answer: `npm run demo -- --serve` keeps them up",
  );
process.exitCode = code;
