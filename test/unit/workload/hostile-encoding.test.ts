// Inputs whose encoding lies: a workload file's bytes are hashed as read, a byte that is not UTF-8
// is refused with its line and offset (never replaced), a leading byte-order mark is accepted;
// what is read but not used (ShareGPT conversations without a human turn, trace rows that share a
// timestamp), shard labels like 1/0 and records at levels a document does not list are named or
// refused, never dropped in silence.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mergeShards } from "../../../src/core/documents/merge.ts";
import { readResults } from "../../../src/core/results/files.ts";
import { firstInvalidUtf8, loadDataset, parseDataset } from "../../../src/core/workload/dataset.ts";
import { loadTrace, parseTrace } from "../../../src/core/workload/trace.ts";
import type { TokenbenchError } from "../../../src/schema/errors.ts";
import { parseResultDocument } from "../../../src/schema/v1.ts";

const dir = mkdtempSync(join(tmpdir(), "tokenbench-encoding-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, bytes: Buffer | string) => {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
};
const line = (prompt: string) => `${JSON.stringify({ prompt })}\n`;
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const errorOf = (f: () => unknown): TokenbenchError => {
  try {
    f();
  } catch (e) {
    return e as TokenbenchError;
  }
  throw new Error("expected an error");
};

describe("bytes that are not UTF-8 are refused with their line and offset", () => {
  const head = Buffer.from(line("one") + line("two"));
  for (const [what, bad, column] of [
    ["a lone 0xff", [0xff], 12],
    ["a 0xfe", [0xfe], 12],
    ["an overlong NUL (C0 80)", [0xc0, 0x80], 12],
    ["a UTF-16 surrogate (ED A0 80)", [0xed, 0xa0, 0x80], 12],
    ["a 4-byte lead past U+10FFFF (F5)", [0xf5, 0x80, 0x80, 0x80], 12],
  ] as const)
    it(`${what} on line 3`, () => {
      // {"prompt":"<bad>"}: the bad byte is column 12 of line 3
      const bytes = Buffer.concat([head, Buffer.from('{"prompt":"'), Buffer.from(bad), Buffer.from('"}\n')]);
      const e = errorOf(() => loadDataset(file(`bad-${bad[0]}.jsonl`, bytes)));
      expect(e.code).toBe("dataset_invalid");
      expect(e.message).toMatch(
        new RegExp(`not valid UTF-8 at line 3, column ${column} \\(byte ${head.length + 11} of the file`),
      );
    });

  it("a file that ends inside a multi-byte character", () => {
    const bytes = Buffer.concat([Buffer.from(line("ok")), Buffer.from([0xe2, 0x82])]);
    expect(errorOf(() => loadDataset(file("cut.jsonl", bytes))).message).toMatch(/line 2, column 1 /);
  });

  it("a trace with a bad byte is refused the same way", () => {
    const bytes = Buffer.concat([
      Buffer.from(`${JSON.stringify({ timestamp: 0, input_length: 8, output_length: 2 })}\n`),
      Buffer.from([0xff, 0x0a]),
    ]);
    const e = errorOf(() => loadTrace(file("bad-trace.jsonl", bytes)));
    expect(e.code).toBe("trace_invalid");
    expect(e.message).toMatch(/not valid UTF-8 at line 2, column 1/);
  });

  it("well-formed multi-byte text is accepted, byte for byte", () => {
    for (const s of ["é", "日本語", "😀 emoji", "\u{10FFFF}"])
      expect(firstInvalidUtf8(Buffer.from(s))).toBe(-1);
    const p = file("utf8.jsonl", line("café 😀"));
    expect(loadDataset(p).entries[0]!.prompt).toBe("café 😀");
  });
});

describe("the hash is of the bytes read", () => {
  it("two files that differ in one byte record different hashes, each the SHA-256 of its bytes", () => {
    const a = Buffer.from(line("résumé"));
    const b = Buffer.from(line("resume"));
    const da = loadDataset(file("a.jsonl", a));
    const db = loadDataset(file("b.jsonl", b));
    expect(da.sha256).toBe(sha(a));
    expect(db.sha256).toBe(sha(b));
    expect(da.sha256).not.toBe(db.sha256);
  });

  it("a leading byte-order mark is read past (JSON Lines and ShareGPT) and counted in the hash", () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const jsonl = Buffer.concat([bom, Buffer.from(line("hello") + line("world"))]);
    const d = loadDataset(file("bom.jsonl", jsonl));
    expect(d.entries.map((e) => e.prompt)).toEqual(["hello", "world"]);
    expect(d.sha256).toBe(sha(jsonl));
    const share = Buffer.concat([
      bom,
      Buffer.from(JSON.stringify([{ conversations: [{ from: "human", value: "hi" }] }])),
    ]);
    expect(loadDataset(file("bom-sharegpt.json", share)).entries[0]!.prompt).toBe("hi");
    const trace = Buffer.concat([
      bom,
      Buffer.from(`${JSON.stringify({ timestamp: 0, input_length: 8, output_length: 2 })}\n`),
    ]);
    expect(loadTrace(file("bom-trace.jsonl", trace)).rows).toHaveLength(1);
  });
});

describe("what is read but not used is named once", () => {
  it("ShareGPT conversations without a human turn: a notice naming them", () => {
    const text = JSON.stringify([
      { conversations: [{ from: "human", value: "a" }] },
      { conversations: [{ from: "gpt", value: "only an answer" }] },
      { conversations: [] },
      {
        conversations: [
          { from: "human", value: "" },
          { from: "gpt", value: "x" },
        ],
      },
      { conversations: [{ from: "human", value: "b" }] },
    ]);
    const d = parseDataset(text, "share.json");
    expect(d.entries.map((e) => e.prompt)).toEqual(["a", "b"]);
    expect(d.lines).toBe(5);
    expect(d.notices).toEqual([
      "share.json: 3 of 5 conversations have no human turn to use as the prompt (items 1, 2, 3): they are skipped",
    ]);
  });

  it("ShareGPT with no human turn at all, or JSON that is not an array, is refused", () => {
    expect(errorOf(() => parseDataset(JSON.stringify([{ conversations: [] }]), "x.json")).message).toMatch(
      /no usable prompt/,
    );
    expect(errorOf(() => parseDataset("[1]", "y.json")).message).toMatch(/item 0 has no "conversations"/);
  });

  it("trace rows that share a timestamp: a notice with their count", () => {
    const rows = [0, 5, 5, 5, 9].map((t) =>
      JSON.stringify({ timestamp: t, input_length: 8, output_length: 2 }),
    );
    const t = parseTrace(rows.join("\n"), "ties.jsonl");
    expect(t.notices).toEqual([
      "ties.jsonl: 2 of 5 rows share their timestamp with the row before: they are sent at the same moment, in file order",
    ]);
    expect(parseTrace(rows.slice(0, 2).join("\n"), "none.jsonl").notices).toBeUndefined();
  });
});

describe("documents that contradict themselves", () => {
  const example = JSON.parse(readFileSync("schema/examples/closed-sweep.json", "utf8"));

  for (const label of ["1/0", "0/2", "3/2", "1/", "a/b", "01/2"])
    it(`a shard label of "${label}" is not schema v1`, () => {
      const doc = { ...example, load_generator: { workers: 1, shard: label, start_at_epoch_ms: 1 } };
      expect(() => parseResultDocument(doc)).toThrow(/load_generator\.shard.*i\/n with 1 <= i <= n/);
    });

  it("a shard label of 2/4 is", () => {
    const doc = { ...example, load_generator: { workers: 1, shard: "2/4", start_at_epoch_ms: 1 } };
    expect(parseResultDocument(doc).load_generator?.shard).toBe("2/4");
  });

  it("inline records at a level the document does not list: refused, naming the level", () => {
    const requests = example.requests.map((r: { level: number }, i: number) =>
      i === 0 ? { ...r, level: 99 } : r,
    );
    const p = file("stray-inline.json", JSON.stringify({ ...example, requests }));
    const e = errorOf(() => readResults(p));
    expect(e.code).toBe("results_file_invalid");
    expect(e.message).toMatch(
      /1 per-request record\(s\) are at level\(s\) 99, which the document's levels \(1, 4\) do not list/,
    );
  });

  it("records in the JSONL file at an unlisted level (a level in progress at a kill): left out and counted; merge refuses such a shard", () => {
    const jsonl = example.requests.map((r: { level: number }, i: number) =>
      JSON.stringify(i < 2 ? { ...r, level: 16 } : r),
    );
    writeFileSync(join(dir, "killed.requests.jsonl"), `${jsonl.join("\n")}\n`);
    const p = file(
      "killed.json",
      JSON.stringify({
        ...example,
        requests: null,
        requests_file: "killed.requests.jsonl",
        load_generator: { workers: 1, shard: "1/2", start_at_epoch_ms: 1 },
      }),
    );
    const r = readResults(p);
    expect(r.unlisted).toBe(2);
    expect(r.records).toHaveLength(example.requests.length - 2);
    expect(r.records.every((x) => x.level !== 16)).toBe(true);
    const other = {
      ...r,
      path: "other.json",
      unlisted: 0,
      doc: { ...r.doc, load_generator: { workers: 1, shard: "2/2", start_at_epoch_ms: 1 } },
    };
    expect(() => mergeShards([{ path: p, ...r }, other], {})).toThrow(
      /holds 2 records at a level its document does not list/,
    );
  });
});
