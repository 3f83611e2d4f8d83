// Files that stay where they belong: a path read from a document resolves inside the document's
// folder, and the Action reads its inputs' files only inside its workspace; `..`, absolute paths
// and symbolic links that lead out are refused with `path_outside`, and nothing of theirs is read.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadBaseline } from "../../../src/action/baseline.ts";
import { mergeShards } from "../../../src/core/documents/merge.ts";
import { pathInside, readResults, writeResults } from "../../../src/core/results/files.ts";
import { TokenbenchError } from "../../../src/schema/errors.ts";
import type { ResultDocument } from "../../../src/schema/v1.ts";

const root = mkdtempSync(join(tmpdir(), "tokenbench-paths-"));
const docs = join(root, "docs");
const outside = join(root, "outside");
mkdirSync(docs);
mkdirSync(join(docs, "sub"));
mkdirSync(outside);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const example = JSON.parse(readFileSync("schema/examples/closed-sweep.json", "utf8"));
const record = example.requests[0];
writeFileSync(join(outside, "secret.jsonl"), `${JSON.stringify({ ...record, id: 424242 })}\n`);
writeFileSync(join(docs, "sub", "records.jsonl"), `${JSON.stringify(record)}\n`);
symlinkSync(join(outside, "secret.jsonl"), join(docs, "link.jsonl"));
symlinkSync(outside, join(docs, "linked-dir"));

/** A document whose per-request records are in `requestsFile`. */
function docWith(requestsFile: string): string {
  const path = join(docs, `${requestsFile.replace(/[^a-z]/gi, "_")}.json`);
  writeFileSync(path, JSON.stringify({ ...example, requests: null, requests_file: requestsFile }));
  return path;
}

const refusedWith = (f: () => unknown, pattern: RegExp) => {
  let err: unknown = null;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(TokenbenchError);
  expect((err as TokenbenchError).code).toBe("path_outside");
  expect((err as Error).message).toMatch(pattern);
};

describe("a document's requests_file", () => {
  it("beside the document, or in a folder under it, is read", () => {
    expect(readResults(docWith("sub/records.jsonl")).records).toHaveLength(1);
  });

  for (const [what, p] of [
    ["`..` out of the folder", "../outside/secret.jsonl"],
    ["an absolute path", join(outside, "secret.jsonl")],
    ["a symbolic link to a file outside", "link.jsonl"],
    ["a path through a linked folder", "linked-dir/secret.jsonl"],
  ] as const)
    it(`${what} is refused, and not read`, () =>
      refusedWith(() => readResults(docWith(p)), /requests_file .* leads outside .*docs/));

  it("merge refuses a shard whose records file leads outside (the CLI's and the Action's merge)", () => {
    const path = docWith("../outside/secret.jsonl");
    refusedWith(() => mergeShards([{ path, ...readResults(path) }], {}), /leads outside/);
  });
});

describe("the Action's baseline input", () => {
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "base.json"), JSON.stringify(example));
  writeFileSync(join(outside, "base.json"), JSON.stringify(example));
  symlinkSync(join(outside, "base.json"), join(workspace, "linked-base.json"));
  const withWorkspace = async (f: () => Promise<unknown>) => {
    const before = process.env.GITHUB_WORKSPACE;
    process.env.GITHUB_WORKSPACE = workspace;
    try {
      return await f();
    } finally {
      if (before === undefined) delete process.env.GITHUB_WORKSPACE;
      else process.env.GITHUB_WORKSPACE = before;
    }
  };

  it("a file in the workspace is read", async () => {
    const b = (await withWorkspace(() => loadBaseline("base.json", "main", null))) as { source: string };
    expect(b.source).toBe("the file base.json");
  });

  for (const [what, p] of [
    ["outside by `..`", "../outside/base.json"],
    ["outside by an absolute path", join(outside, "base.json")],
    ["a symbolic link out of it", "linked-base.json"],
  ] as const)
    it(`${what} is refused`, async () => {
      const err = await withWorkspace(() => loadBaseline(p, "main", null)).catch((e: unknown) => e);
      expect((err as TokenbenchError).code).toBe("path_outside");
      expect((err as Error).message).toMatch(/input "baseline": .* leads outside .*workspace/);
    });
});

describe("pathInside", () => {
  it("the folder itself and paths under it are inside; a sibling with the same prefix is not", () => {
    expect(pathInside(docs, ".")).toBe(docs);
    expect(pathInside(docs, "sub/records.jsonl")).toBe(join(docs, "sub", "records.jsonl"));
    mkdirSync(`${docs}-evil`, { recursive: true });
    expect(pathInside(docs, `${docs}-evil/x.json`)).toBeNull();
    expect(pathInside(docs, "not-yet-written.json")).toBe(join(docs, "not-yet-written.json"));
  });
});

describe("nothing measured is lost to the final check", () => {
  it("a document that breaks schema v1 is written whole beside the results, and the error names the file and the fields", async () => {
    const closed = (await import("../../../schema/examples/closed-sweep.json", { with: { type: "json" } }))
      .default;
    const d = mkdtempSync(join(tmpdir(), "tb-unwritable-"));
    const doc = structuredClone(closed) as never as Parameters<typeof writeResults>[0];
    doc.levels[0]!.ttft_ms.p50 = -5; // what no stream can give: a bug, kept rather than lost
    let err: unknown = null;
    try {
      writeResults(doc, join(d, "out.json"), [], "none");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TokenbenchError);
    expect((err as TokenbenchError).code).toBe("results_unwritable_schema");
    expect((err as Error).message).toMatch(
      /levels\.0\.ttft_ms\.p50: .*everything is in .*out\.invalid\.json/,
    );
    expect(JSON.parse(readFileSync(join(d, "out.invalid.json"), "utf8")).levels[0].ttft_ms.p50).toBe(-5);
  });
});

describe("nothing measured is lost to a write that fails", () => {
  it("where the results cannot go, the whole document goes to the temporary folder, and the error says where", () => {
    const d = mkdtempSync(join(tmpdir(), "tb-unwritten-"));
    writeFileSync(join(d, "file"), "");
    const doc = structuredClone(example) as ResultDocument;
    const records = doc.requests!;
    let err: unknown = null;
    try {
      // a folder that is a file: every write under it fails (ENOTDIR)
      writeResults({ ...doc, requests: null }, join(d, "file", "out.json"), records, "file");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TokenbenchError);
    expect((err as TokenbenchError).code).toBe("results_unwritten");
    const m = (err as Error).message;
    expect(m).toMatch(/could not write .*out\.requests\.jsonl: a part of the path is a file, not a folder/);
    expect(m).toMatch(/Next: check the path, or choose another --out, and run again/);
    expect(m).toMatch(/Nothing was written there; the whole document \(every request inline\) is in /);
    const spare = /is in (\S+)\./.exec(m)![1]!;
    expect(readResults(spare).records).toHaveLength(records.length);
    expect(readdirSync(d)).toEqual(["file"]);
  });
});
