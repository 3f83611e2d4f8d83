// The import boundaries of DEVELOPERS.md, enforced so they hold as the code grows.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function files(dir: string): string[] {
  const abs = join(ROOT, dir);
  let out: string[] = [];
  for (const e of readdirSync(abs)) {
    const p = join(abs, e);
    if (statSync(p).isDirectory()) out = out.concat(files(relative(ROOT, p)));
    else if (/\.(ts|js|mjs)$/.test(e)) out.push(p);
  }
  return out;
}

function imports(file: string): { spec: string; resolved: string | null }[] {
  const src = readFileSync(file, "utf8");
  const re =
    /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;
  const out: { spec: string; resolved: string | null }[] = [];
  for (let m = re.exec(src); m !== null; m = re.exec(src)) {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    out.push({ spec, resolved: spec.startsWith(".") ? relative(ROOT, resolve(file, "..", spec)) : null });
  }
  return out;
}

const NODE_BUILTINS = new Set([
  "assert",
  "buffer",
  "child_process",
  "cluster",
  "crypto",
  "dgram",
  "dns",
  "events",
  "fs",
  "http",
  "http2",
  "https",
  "module",
  "net",
  "os",
  "path",
  "perf_hooks",
  "process",
  "querystring",
  "readline",
  "stream",
  "string_decoder",
  "timers",
  "tls",
  "tty",
  "url",
  "util",
  "v8",
  "vm",
  "worker_threads",
  "zlib",
]);

function violations(dir: string, bad: (spec: string, resolved: string | null) => boolean): string[] {
  const out: string[] = [];
  for (const f of files(dir)) {
    for (const i of imports(f))
      if (bad(i.spec, i.resolved)) out.push(`${relative(ROOT, f)} imports ${i.spec}`);
  }
  return out;
}

describe("import boundaries", () => {
  it("the scanner sees imports (self-check)", () => {
    expect(imports(join(ROOT, "src/core/client/stream-client.ts")).map((i) => i.spec)).toContain("undici");
  });

  it("src/core never imports @actions/* or hono", () => {
    expect(
      violations("src/core", (s) => s.startsWith("@actions/") || s === "hono" || s.startsWith("hono/")),
    ).toEqual([]);
  });

  it("src/core never imports the mock", () => {
    expect(violations("src/core", (_s, r) => r?.startsWith("src/mock") === true)).toEqual([]);
  });

  it("src/mock shares no code with src/core (nor schema, cli)", () => {
    expect(
      violations("src/mock", (s, r) =>
        r !== null ? !r.startsWith("src/mock") : !s.startsWith("node:") && !NODE_BUILTINS.has(s),
      ),
    ).toEqual([]);
  });

  it("src/schema imports nothing but zod", () => {
    expect(
      violations("src/schema", (s, r) => (r !== null ? !r.startsWith("src/schema") : s !== "zod")),
    ).toEqual([]);
  });

  it("src/worker (when present) imports no Node built-ins", () => {
    let list: string[] = [];
    try {
      list = violations("src/worker", (s) => s.startsWith("node:") || NODE_BUILTINS.has(s.split("/")[0]!));
    } catch (err) {
      if ((err as { code?: string }).code !== "ENOENT") throw err;
    }
    expect(list).toEqual([]);
  });
});
