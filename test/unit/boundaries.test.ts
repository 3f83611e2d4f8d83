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

/** The harness's stages, top to bottom: a folder imports only from itself and the folders below it. */
const CORE_FLOORS = [
  "documents",
  "sweep",
  "profile",
  "load",
  "results",
  "client",
  "server",
  "settings",
  "workload",
];

/** The core folder a repository path lies in, or null outside src/core. */
function coreFolder(path: string): string | null {
  const m = /^src\/core\/([^/]+)\//.exec(path);
  return m ? m[1]! : null;
}

/** Every file of src and the src files it imports (relative imports only). */
function importGraph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of files("src")) {
    const from = relative(ROOT, f);
    g.set(
      from,
      imports(f)
        .map((i) => i.resolved)
        .filter((r): r is string => r?.startsWith("src/") === true),
    );
  }
  return g;
}

/** The import cycles among src files, each as the files around it. */
function cycles(g: Map<string, string[]>): string[][] {
  const out: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, "open");
    stack.push(n);
    for (const m of g.get(n) ?? []) {
      if (state.get(m) === "open") out.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, "done");
  };
  for (const n of g.keys()) if (!state.has(n)) visit(n);
  return out;
}

describe("the harness by stage", () => {
  const graph = importGraph();
  const coreImports = [...graph].flatMap(([from, tos]) =>
    coreFolder(from) === null ? [] : tos.map((to) => ({ from, to, a: coreFolder(from)!, b: coreFolder(to) })),
  );

  it("src/core holds its stages as folders, and every folder is a known stage", () => {
    const entries = readdirSync(join(ROOT, "src/core"));
    expect(entries.filter((e) => !statSync(join(ROOT, "src/core", e)).isDirectory())).toEqual([]);
    expect(entries.sort()).toEqual([...CORE_FLOORS].sort());
  });

  it("every import in src/core points to its own folder or a lower one", () => {
    const up = coreImports.filter((i) => i.b !== null && CORE_FLOORS.indexOf(i.b) < CORE_FLOORS.indexOf(i.a));
    expect(up.map((i) => `${i.from} imports ${i.to}`)).toEqual([]);
  });

  it("workload/ and settings/ import no other core folder; server/ imports nothing of settings/", () => {
    const bad = coreImports.filter(
      (i) =>
        i.b !== null &&
        ((["workload", "settings"].includes(i.a) && i.b !== i.a) || (i.a === "server" && i.b === "settings")),
    );
    expect(bad.map((i) => `${i.from} imports ${i.to}`)).toEqual([]);
  });

  it("client/ imports only itself and the server's target (no workload, settings, load or results)", () => {
    const bad = coreImports.filter(
      (i) => i.a === "client" && i.b !== null && i.b !== "client" && i.to !== "src/core/server/target.ts",
    );
    expect(bad.map((i) => `${i.from} imports ${i.to}`)).toEqual([]);
  });

  it("nothing imports documents/ but the CLI and the Action", () => {
    const bad = [...graph].flatMap(([from, tos]) =>
      tos
        .filter((to) => coreFolder(to) === "documents")
        .filter((_) => !/^src\/(cli|action)\//.test(from) && coreFolder(from) !== "documents")
        .map((to) => `${from} imports ${to}`),
    );
    expect(bad).toEqual([]);
  });

  it("no import cycles anywhere in src", () => {
    expect(cycles(graph).map((c) => c.join(" -> "))).toEqual([]);
  });

  it("no file in src is over 400 lines", () => {
    const long = files("src")
      .map((f) => ({ f: relative(ROOT, f), n: readFileSync(f, "utf8").split("\n").length - 1 }))
      .filter((x) => x.n > 400);
    expect(long.map((x) => `${x.f}: ${x.n} lines`)).toEqual([]);
  });

  it("results/ imports nothing from load/ or the samplers: it reads what they measured as data", () => {
    const bad = coreImports.filter(
      (i) =>
        i.a === "results" &&
        (i.b === "load" || /^src\/core\/server\/(metrics-sampler|gpu-sampler|gpu-telemetry)\.ts$/.test(i.to)),
    );
    expect(bad.map((i) => `${i.from} imports ${i.to}`)).toEqual([]);
  });

  it("one level runner, one spec factory, one verdict engine", () => {
    const exported = (name: string) =>
      files("src").filter((f) =>
        new RegExp(`export (async )?function ${name}\\b`).test(readFileSync(f, "utf8")),
      );
    expect(exported("runLevel").map((f) => relative(ROOT, f))).toEqual(["src/core/load/level-run.ts"]);
    expect(exported("runShardedLevel")).toEqual([]);
    expect(exported("specFactory").map((f) => relative(ROOT, f))).toEqual(["src/core/load/requests.ts"]);
    expect(exported("indexedSpecFactory")).toEqual([]);
    const stats = readFileSync(join(ROOT, "src/shared/statistics.ts"), "utf8");
    expect(stats).not.toMatch(/export (function judge|type Verdict|interface Comparison)/);
  });

  it("no per-request array is spread into Math.max or Math.min (shared/extremes.ts)", () => {
    const bad = files("src").filter((f) => /Math\.(max|min)\(\.\.\./.test(readFileSync(f, "utf8")));
    expect(bad.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("every file in src says what it is for in a header comment (docs/development.md's layout is made of them)", async () => {
    const { sourceFiles } = await import("../../scripts/docs-blocks.ts");
    expect(
      sourceFiles(ROOT, "src")
        .filter((f) => f.header === null)
        .map((f) => f.path),
    ).toEqual([]);
  });
  it("the settings tables hold declarations only", () => {
    for (const t of ["table.ts", "sweep-table.ts", "action-table.ts"]) {
      const src = readFileSync(join(ROOT, "src/core/settings", t), "utf8");
      expect(src, t).not.toMatch(/^export (async )?function|^function|^export class|^class/m);
    }
  });
});

describe("import boundaries", () => {
  it("the scanner sees imports (self-check)", () => {
    expect(imports(join(ROOT, "src/core/client/stream-client.ts")).map((i) => i.spec)).toContain("undici");
    expect(imports(join(ROOT, "src/core/sweep/sweep.ts")).map((i) => i.resolved)).toContain(
      "src/core/load/level-run.ts",
    );
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
