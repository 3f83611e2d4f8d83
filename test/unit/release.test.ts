// The release workflow's steps, offline: the tag/version check, `npm publish --dry-run`, and the
// major tag's move as git operations on a scratch clone pushing to a scratch "origin".
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SCRIPT = join(ROOT, "scripts/release.mjs");
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
const step = (cwd: string, ...args: string[]) =>
  spawnSync("node", [SCRIPT, ...args], { cwd, encoding: "utf8" });

function scratch(): { work: string; origin: string } {
  const base = mkdtempSync(join(tmpdir(), "tokenbench-release-"));
  const origin = join(base, "origin.git");
  const work = join(base, "work");
  git(base, "init", "--quiet", "--bare", origin);
  git(base, "clone", "--quiet", origin, work);
  git(work, "config", "user.email", "t@example.com");
  git(work, "config", "user.name", "t");
  return { work, origin };
}
function release(work: string, version: string): string {
  writeFileSync(join(work, "package.json"), JSON.stringify({ name: "x", version }));
  git(work, "add", "package.json");
  git(work, "commit", "--quiet", "-m", `release ${version}`);
  git(work, "tag", `v${version}`);
  return git(work, "rev-parse", "HEAD");
}

describe("the release steps", () => {
  it("check-tag: the tag must name package.json's version", () => {
    const { work } = scratch();
    release(work, "1.2.3");
    expect(step(work, "check-tag", "v1.2.3").status).toBe(0);
    const wrong = step(work, "check-tag", "v1.2.4");
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toBe(
      "release: the tag v1.2.4 does not match package.json's version 1.2.3: bump the version (npm version 1.2.4) or tag v1.2.3\n",
    );
    expect(step(work, "check-tag", "latest").stderr).toMatch(/expected a version tag like v1\.2\.3/);
  });

  it("major-tag: v1 moves to each release and is force-pushed; exact tags stay", () => {
    const { work, origin } = scratch();
    const first = release(work, "1.0.0");
    expect(step(work, "major-tag", "v1.0.0", "--push").status).toBe(0);
    expect(git(origin, "rev-parse", "v1^{commit}")).toBe(first);
    const second = release(work, "1.1.0");
    git(work, "push", "--quiet", "origin", "v1.0.0", "v1.1.0", "HEAD:main");
    const r = step(work, "major-tag", "v1.1.0", "--push");
    expect(r.stdout).toBe(`release: v1 -> v1.1.0 (${second.slice(0, 7)})\n`);
    expect(git(origin, "rev-parse", "v1^{commit}")).toBe(second);
    expect(git(origin, "rev-parse", "v1.0.0^{commit}")).toBe(first);
    expect(git(origin, "cat-file", "-t", "v1")).toBe("tag"); // annotated, as the Marketplace shows it
  });

  it("npm publish --dry-run: the package holds the CLI, the mock, the schema and the docs, nothing else", {
    timeout: 120_000,
  }, () => {
    const r = spawnSync("npm", ["publish", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.slice(r.stdout.indexOf("{")));
    const files = (out.files ?? out[Object.keys(out)[0]!]?.files ?? [])
      .map((f: { path: string }) => f.path)
      .sort();
    expect(files).toEqual(
      expect.arrayContaining([
        "bin/tokenbench.js",
        "dist/cli.js",
        "dist/mock.js",
        "dist/shard-thread.js",
        "dist/dcgm-thread.js",
        "package.json",
        "README.md",
      ]),
    );
    expect(
      files.some((f: string) => f.startsWith("src/") || f.startsWith("test/") || f === "dist/index.js"),
    ).toBe(false);
  });
});

describe("what the docs tell users to pin", () => {
  it("every `uses: tokenbench/tokenbench@vN` is the major tag the release script moves for package.json's version", async () => {
    const { readFileSync } = await import("node:fs");
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
    const major = `v${version.split(".")[0]}`;
    const seen: string[] = [];
    for (const file of ["README.md", "docs/action.md", "docs/service.md", "docs/cli.md"])
      for (const m of readFileSync(join(ROOT, file), "utf8").matchAll(/tokenbench\/tokenbench@(v\d+)/g))
        seen.push(`${file}: ${m[1]}`);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((s) => !s.endsWith(`: ${major}`))).toEqual([]);
  });

  it("the package names its repository, so the registry page links back", async () => {
    const { readFileSync } = await import("node:fs");
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\/github\.com\/tokenbench\/tokenbench\.git$/);
  });
});
