/** A PATH whose first folder holds the fake nvidia-smi (fake-nvidia-smi.mjs), for child processes. */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export function fakeNvidiaSmiPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "tokenbench-fake-smi-"));
  const bin = join(dir, "nvidia-smi");
  writeFileSync(
    bin,
    `#!/bin/sh\nexec "${process.execPath}" "${resolve(import.meta.dirname, "fake-nvidia-smi.mjs")}" "$@"\n`,
  );
  chmodSync(bin, 0o755);
  return `${dir}:${process.env.PATH ?? ""}`;
}
