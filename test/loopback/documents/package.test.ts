// The package as npm users get it: `npm pack`, installed in an empty folder (charting libraries
// left out, as `--omit=optional` or a failed native build leaves them), then `npx tokenbench
// mockserver` and `npx tokenbench sweep` against it; charts say what they need.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseResultDocument } from "../../../src/schema/v1.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const dir = mkdtempSync(join(tmpdir(), "tokenbench-package-"));
const app = join(dir, "app");
let mock: ChildProcess | null = null;
afterAll(async () => {
  if (mock && mock.exitCode === null) {
    const gone = new Promise((r) => mock!.once("exit", r));
    mock.kill("SIGTERM");
    await gone;
  }
});

const npx = (args: string[]) =>
  spawnSync("npx", ["--no-install", "tokenbench", ...args], { cwd: app, encoding: "utf8", timeout: 120_000 });

describe("the published package", () => {
  it("installs from its tarball in an empty folder and sweeps the mock it carries", {
    timeout: 240_000,
  }, async () => {
    const pack = spawnSync("npm", ["pack", "--pack-destination", dir, "--ignore-scripts", "--silent"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(pack.status, pack.stderr).toBe(0);
    const tgz = readdirSync(dir).find((f) => f.endsWith(".tgz"))!;
    spawnSync("mkdir", [app]);
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({ name: "app", version: "1.0.0", private: true }),
    );
    const install = spawnSync(
      "npm",
      ["install", "--omit=optional", "--offline", "--no-audit", "--no-fund", join(dir, tgz)],
      { cwd: app, encoding: "utf8", timeout: 120_000 },
    );
    expect(install.status, install.stderr).toBe(0);
    // the CLI needs nothing else at run time: no dependency installed but the package itself
    expect(readdirSync(join(app, "node_modules")).filter((d) => !d.startsWith("."))).toEqual(["tokenbench"]);

    // the installed bin itself (npx would leave it running as its child when stopped)
    mock = spawn(
      join(app, "node_modules/.bin/tokenbench"),
      ["mockserver", "--port", "0", "--ttft-ms", "5", "--itl-ms", "1"],
      {
        cwd: app,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    const url = await new Promise<string>((res, rej) => {
      let err = "";
      mock!.stderr!.on("data", (d) => {
        err += d;
        const m = /listening on (http:\/\/\S+):/.exec(err);
        if (m) res(m[1]!);
      });
      mock!.on("exit", (code) => rej(new Error(`mockserver exited ${code}: ${err}`)));
    });
    const sweep = npx([
      "sweep",
      "--base-url",
      url,
      "--levels",
      "1,2",
      "--requests",
      "4",
      "--max-tokens",
      "4",
      "--out",
      "r.json",
    ]);
    expect(sweep.status, sweep.stderr).toBe(0);
    const doc = parseResultDocument(JSON.parse(readFileSync(join(app, "r.json"), "utf8")));
    expect(doc.levels.map((l) => [l.level, l.ok])).toEqual([
      [1, 4],
      [2, 4],
    ]);
    // charts without the optional charting libraries: one clear error, the results untouched
    const report = npx(["report", "r.json"]);
    expect(report.status).toBe(1);
    expect(report.stderr).toMatch(
      /error \[plots_unavailable\]: charts need vega, which is not installed .*npm i vega@6\.4\.0 vega-lite@6\.4\.0 @resvg\/resvg-js@2\.6\.2/,
    );
    const plots = npx([
      "sweep",
      "--base-url",
      url,
      "--levels",
      "1",
      "--requests",
      "2",
      "--max-tokens",
      "2",
      "--out",
      "p.json",
      "--plots",
    ]);
    expect(plots.status).toBe(1);
    expect(plots.stderr).toMatch(/plots_unavailable/);
    expect(parseResultDocument(JSON.parse(readFileSync(join(app, "p.json"), "utf8"))).levels).toHaveLength(1);
  });
});
