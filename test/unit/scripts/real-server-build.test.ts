// `npm run real-server`'s build speaks: each step and cmake's percentage, with the elapsed time.
// The real build takes 15 minutes; here npm, tar, git and cmake are stand-ins on PATH that do
// what the build needs of them, so the steps and their messages run as they do for real.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";

const fake = mkdtempSync(join(tmpdir(), "tokenbench-fake-tools-"));
const tool = (name: string, body: string) => {
  writeFileSync(join(fake, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(fake, name), 0o755);
};
tool("npm", 'echo "npm notice New major version of npm available!" >&2; touch node-llama-cpp-3.21.1.tgz');
tool("tar", "exit 0");
tool("git", "mkdir -p src/models && touch src/models/ggml-vocab-llama-spm.gguf");
tool("nproc", "echo 2");
tool(
  "cmake",
  `case "$1" in
  --build) for p in 3 12 25 48 71 99 100; do echo "[ $p%] Building CXX object x.o"; done; mkdir -p build/bin; touch build/bin/llama-server;;
  *) echo "-- configured";;
esac`,
);

describe("npm run real-server: the build prints its progress", () => {
  it("each step, cmake's percentage every 10 %, the elapsed time; no npm advice", async () => {
    const cache = mkdtempSync(join(tmpdir(), "tokenbench-cache-"));
    mkdirSync(cache, { recursive: true });
    process.env.TOKENBENCH_CACHE = cache;
    process.env.PATH = `${fake}:${process.env.PATH}`;
    const said: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((s: string | Uint8Array) => {
      said.push(String(s));
      return true;
    });
    try {
      const { ensureLlamaServer, buildPercent } = await import("../../../scripts/real-server/index.ts");
      expect(buildPercent("[ 42%] Building CXX object")).toBe(42);
      expect(buildPercent("-- Configuring done")).toBeNull();
      const bin = await ensureLlamaServer();
      expect(existsSync(bin)).toBe(true);
    } finally {
      spy.mockRestore();
    }
    const text = said.join("");
    for (const step of [
      "[1/5] fetching",
      "[2/5] unpacking",
      "[3/5] checking out",
      "[4/5] configuring",
      "[5/5] compiling",
    ])
      expect(text).toContain(`real-server: ${step}`);
    // 3, 12, 25, 48, 71, 99, 100: a line each time another 10 % is passed, with the time so far
    expect(text.match(/\[5\/5\] compiling llama-server with 2 jobs .*: \d+ % \(\d+ s\)/g)).toHaveLength(7);
    expect(text).toMatch(/cached .*llama-server \(built in \d+ s\)/);
    expect(text).not.toContain("New major version"); // advice that does not apply offline stays off
  });
});
