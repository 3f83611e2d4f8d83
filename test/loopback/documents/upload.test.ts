// `tokenbench upload`: a CLI run stored in the local results service (wrangler dev, real D1), placed
// by the git checkout it runs in (or by flags), found by the API and shown by its badge; and the
// ways it is refused, each before anything is sent or with the service's own answer.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalService, startService } from "../../../scripts/local-service.ts";
import { githubRepository } from "../../../src/core/documents/git-checkout.ts";
import { runCli } from "../../helpers/cli.ts";
import { type MockProcess, startMock } from "../../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-upload-"));
const checkout = join(dir, "checkout");
const repo = "acme/llm-serving";
let service: LocalService;
let mock: MockProcess;
let results: string;
let token: string;
let head: string;

const git = (...args: string[]) =>
  execFileSync("git", args, {
    cwd: checkout,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
  }).trim();

beforeAll(async () => {
  [service, mock] = await Promise.all([startService(), startMock({ ttftMs: 10, itlMs: 2 })]);
  token = await service.apiToken(repo);
  execFileSync("git", ["init", "-q", "-b", "main", checkout]);
  git("config", "user.email", "ci@example.com");
  git("config", "user.name", "ci");
  git("remote", "add", "origin", `git@github.com:${repo}.git`);
  writeFileSync(join(checkout, "serve.sh"), "vllm serve model\n");
  git("add", ".");
  git("commit", "-q", "-m", "serve");
  head = git("rev-parse", "HEAD");
  results = join(dir, "run.json");
  const r = await runCli([
    "sweep",
    "--base-url",
    mock.url,
    "--levels",
    "1,2",
    "--requests",
    "16",
    "--max-tokens",
    "8",
    "--client-late-floor-ms",
    "60",
    "--quiet",
    "--out",
    results,
  ]);
  expect(r.code, r.stderr).toBe(0);
}, 240_000);
afterAll(async () => {
  await Promise.all([service?.stop(), mock?.close()]);
});

describe("tokenbench upload", () => {
  it("stores a CLI run placed by the checkout (repository from origin, branch, HEAD); the API has it and the badge shows its value", async () => {
    const before = readFileSync(results, "utf8");
    const r = await runCli(["upload", results, "--url", service.url, "--token", token], { cwd: checkout });
    expect(r.code, r.stderr).toBe(0);
    const m = /^stored: .* as run (\S+) of acme\/llm-serving main at ([0-9a-f]{7})/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(m![2]).toBe(head.slice(0, 7));
    expect(readFileSync(results, "utf8")).toBe(before); // the file is never rewritten
    const stored = (await (await fetch(`${service.url}/api/v1/runs/${m![1]}`)).json()) as {
      document: { repository: string; git: { sha: string; branch: string; ref: string }; levels: unknown[] };
    };
    expect(stored.document.repository).toBe(repo);
    expect(stored.document.git).toMatchObject({ sha: head, branch: "main", ref: "refs/heads/main" });
    expect(stored.document.levels).toHaveLength(2);
    const doc = JSON.parse(before) as { levels: { level: number; output_tok_s: number }[] };
    const q = new URLSearchParams({ branch: "main", benchmark: "closed c=2", measure: "output_tok_s" });
    const badge = (await (await fetch(`${service.url}/badge/${repo}.json?${q}`)).json()) as {
      message: string;
    };
    expect(badge.message).not.toBe("no data");
    expect(Number.parseFloat(badge.message)).toBeCloseTo(doc.levels[1]!.output_tok_s, -1);
    // the same document again: the service already has it
    const again = await runCli(["upload", results, "--url", service.url], {
      cwd: checkout,
      env: { TOKENBENCH_API_TOKEN: token },
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^already stored: /);
  }, 120_000);

  it("flags place a pull request's run: --branch, --pr, --base-branch, --sha, --repository outside any checkout", async () => {
    const r = await runCli(
      [
        "upload",
        results,
        "--url",
        service.url,
        "--token",
        token,
        "--repository",
        repo,
        "--branch",
        "feature",
        "--pr",
        "7",
        "--base-branch",
        "main",
        "--sha",
        "a".repeat(40),
        "--testbed",
        "h100-vllm",
      ],
      { cwd: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    const id = /as run (\S+) of acme\/llm-serving feature \(PR #7\) at aaaaaaa/.exec(r.stdout)?.[1];
    expect(id, r.stdout).toBeDefined();
    const stored = (await (await fetch(`${service.url}/api/v1/runs/${id}`)).json()) as {
      document: { git: Record<string, unknown>; testbed: { name: string } };
    };
    expect(stored.document.git).toMatchObject({
      branch: "feature",
      pr_number: 7,
      base_branch: "main",
      ref: "refs/pull/7/merge",
    });
    expect(stored.document.testbed.name).toBe("h100-vllm");
  }, 120_000);

  it("refused with the step to take: no url or token (exit 2), no repository or branch (exit 2), a wrong token (exit 1, upload_failed with the service's answer)", async () => {
    const noUrl = await runCli(["upload", results, "--token", token], { cwd: checkout });
    expect([noUrl.code, noUrl.stderr]).toEqual([2, expect.stringMatching(/--url is required/)]);
    const noToken = await runCli(["upload", results, "--url", service.url], {
      cwd: checkout,
      env: { TOKENBENCH_API_TOKEN: "" },
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/--token \(or TOKENBENCH_API_TOKEN\) is required/);
    const nowhere = await runCli(["upload", results, "--url", service.url, "--token", token], { cwd: dir });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toMatch(/no repository: .*pass --repository OWNER\/NAME/);
    git("checkout", "-q", "--detach");
    try {
      const detached = await runCli(["upload", results, "--url", service.url, "--token", token], {
        cwd: checkout,
      });
      expect(detached.code).toBe(2);
      expect(detached.stderr).toMatch(/no branch: .*detached HEAD; pass --branch NAME/);
    } finally {
      git("checkout", "-q", "main");
    }
    const forged = await runCli(["upload", results, "--url", service.url, "--token", "tb_forged"], {
      cwd: checkout,
    });
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(
      /error \[upload_failed\]: .* was not stored by .*HTTP 401.*the file is unchanged/,
    );
  }, 120_000);
});

describe("the repository of a git remote", () => {
  it("reads GitHub's https, scp-like and ssh URLs, and nothing else", () => {
    expect(githubRepository("https://github.com/acme/llm.git")).toBe("acme/llm");
    expect(githubRepository("https://x-access-token:abc@github.com/acme/llm")).toBe("acme/llm");
    expect(githubRepository("git@github.com:acme/llm.git")).toBe("acme/llm");
    expect(githubRepository("ssh://git@github.com/acme/llm.git")).toBe("acme/llm");
    expect(githubRepository("https://gitlab.com/acme/llm.git")).toBeNull();
    expect(githubRepository("/srv/git/llm")).toBeNull();
  });
});
