// `npm test` starts here: the real parts the suite drives must be on the machine, or it stops at
// once with one line naming the part and how to install it (rather than skipping its tests or
// failing minutes later). TOKENBENCH_SKIP_BROWSER=1 leaves the Chromium tests out on purpose, and
// says how many.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const browserTests = () =>
  readdirSync("test/loopback/dashboard")
    .filter((f) => f.endsWith(".test.ts"))
    .reduce(
      (n, f) =>
        n + (readFileSync(join("test/loopback/dashboard", f), "utf8").match(/^\s+it\(/gm) ?? []).length,
      0,
    );

if (process.env.TOKENBENCH_SKIP_BROWSER === "1") {
  process.stderr.write(
    `TOKENBENCH_SKIP_BROWSER=1: the ${browserTests()} dashboard tests in headless Chromium are skipped on purpose\n`,
  );
} else if (!existsSync(chromium)) {
  process.stderr.write(
    `npm test: the dashboard tests need Chromium at ${chromium}, which is missing: install it (Debian: sudo apt-get install chromium fonts-dejavu-core), or set CHROMIUM_PATH to a Chromium binary, or set TOKENBENCH_SKIP_BROWSER=1 to skip those ${browserTests()} tests on purpose\n`,
  );
  process.exit(1);
}
