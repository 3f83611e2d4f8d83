import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const env = (over: Record<string, string>) => {
  const e: Record<string, string | undefined> = { ...process.env, ...over };
  if (!("TOKENBENCH_SKIP_BROWSER" in over)) delete e.TOKENBENCH_SKIP_BROWSER;
  return e;
};

describe("npm test checks the real parts first: nothing skipped in silence", () => {
  it("without Chromium, npm test fails in seconds with one line naming it and how to install it", () => {
    const t0 = performance.now();
    const r = spawnSync("npm", ["test", "--silent"], {
      cwd: ROOT,
      env: env({ CHROMIUM_PATH: "/nonexistent/chromium" }),
      encoding: "utf8",
    });
    const s = (performance.now() - t0) / 1000;
    expect(r.status).toBe(1);
    expect(s).toBeLessThan(10);
    const lines = r.stderr.split("\n").filter((l) => l.includes("Chromium"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /need Chromium at \/nonexistent\/chromium, which is missing: install it \(Debian: sudo apt-get install chromium.*TOKENBENCH_SKIP_BROWSER=1 to skip those \d+ tests on purpose/,
    );
    expect(r.stdout).not.toContain("tsc"); // stopped before the build
  });

  it("TOKENBENCH_SKIP_BROWSER=1 skips them on purpose and says how many", () => {
    const r = spawnSync("node", ["scripts/test-prerequisites.mjs"], {
      cwd: ROOT,
      env: env({ CHROMIUM_PATH: "/nonexistent/chromium", TOKENBENCH_SKIP_BROWSER: "1" }),
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(
      /^TOKENBENCH_SKIP_BROWSER=1: the [1-9]\d* dashboard tests in headless Chromium are skipped on purpose\n$/,
    );
  });
});
