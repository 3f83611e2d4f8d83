import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ExportError, exportBencher, exportGab } from "../../../src/core/documents/export.ts";
import { ImportError, importVllm, vllmResultsIn } from "../../../src/core/documents/import-vllm.ts";
import { parseResultDocument } from "../../../src/schema/v1.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const fixture = () => JSON.parse(readFileSync(resolve(ROOT, "test/fixtures/vllm-bench-serve.json"), "utf8"));
const summaryFixture = () =>
  JSON.parse(readFileSync(resolve(ROOT, "test/fixtures/vllm-bench-serve-summary.json"), "utf8"));
const SOURCE = "vllm bench serve (run.json)";

/** Every number anywhere in a value, with its path. */
function numbers(x: unknown, path = "$"): { path: string; value: number }[] {
  if (typeof x === "number") return [{ path, value: x }];
  if (Array.isArray(x)) return x.flatMap((v, i) => numbers(v, `${path}[${i}]`));
  if (x !== null && typeof x === "object")
    return Object.entries(x).flatMap(([k, v]) => numbers(v, `${path}.${k}`));
  return [];
}

/** The ImportError a raw result gets, or a failure when it is imported. */
function refusal(raw: unknown): ImportError {
  try {
    importVllm(raw, SOURCE);
  } catch (err) {
    expect(err).toBeInstanceOf(ImportError);
    expect((err as ImportError).code).toBe("import_invalid");
    return err as ImportError;
  }
  throw new Error("imported without an error");
}

describe("import vllm: values that would become NaN or Infinity are refused, naming file and field", () => {
  it("a zero, negative or string duration (every rate divides by it)", () => {
    for (const duration of [0, -1.5, "12.3", null]) {
      const e = refusal({ ...fixture(), duration });
      expect(e.message).toMatch(
        /^vllm bench serve \(run\.json\): duration must be a number of seconds above 0/,
      );
    }
    expect(refusal({ ...summaryFixture(), duration: 0 }).message).toMatch(/duration/);
    expect(refusal({ ...fixture(), duration: "12.3" }).message).toContain('"12.3" (a string)');
  });

  it("strings, negatives and non-numbers inside the per-request arrays, named with their index", () => {
    const a = fixture();
    a.ttfts[3] = "0.03";
    expect(refusal(a).message).toMatch(
      /ttfts\[3\] must be a number of seconds ≥ 0, found "0\.03" \(a string\)/,
    );
    const b = fixture();
    b.itls[2][5] = "fast";
    expect(refusal(b).message).toMatch(/itls\[2\]\[5\] must be numbers of seconds ≥ 0, found "fast"/);
    const c = fixture();
    c.itls[0] = 0.01;
    expect(refusal(c).message).toMatch(/itls\[0\] must be an array/);
    const d = fixture();
    d.output_lens[1] = 2.5;
    expect(refusal(d).message).toMatch(/output_lens\[1\] must be a count of tokens/);
    const e = fixture();
    e.ttfts[0] = -0.1;
    expect(refusal(e).message).toMatch(/ttfts\[0\]/);
  });

  it("per-request arrays that do not belong together: one missing, or of different lengths", () => {
    const { itls: _itls, ...noItls } = fixture();
    expect(refusal(noItls).message).toMatch(/ttfts, output_lens given without itls/);
    const short = fixture();
    short.itls.pop();
    expect(refusal(short).message).toMatch(/itls has 15 entries, ttfts 16/);
  });

  it("counts and rates that cannot be: negative, fractional, fewer prompts than completions, rates above the counts", () => {
    expect(refusal({ ...fixture(), completed: -1 }).message).toMatch(/completed must be a count/);
    expect(refusal({ ...fixture(), completed: 2.5 }).message).toMatch(/completed must be a count/);
    expect(refusal({ ...fixture(), num_prompts: 3 }).message).toMatch(
      /num_prompts must be at least completed \(16\)/,
    );
    expect(refusal({ ...fixture(), max_concurrency: 0 }).message).toMatch(/max_concurrency/);
    expect(refusal({ ...fixture(), request_rate: "fast" }).message).toMatch(
      /request_rate must be a number .* or "inf"/,
    );
    expect(refusal({ ...fixture(), output_throughput: -3 }).message).toMatch(/output_throughput/);
    expect(refusal({ ...summaryFixture(), mean_ttft_ms: "36" }).message).toMatch(
      /mean_ttft_ms must be a number of milliseconds/,
    );
    // 10^9 tok/s over 1.9 s is more than the 1,024 tokens the result counts
    expect(refusal({ ...fixture(), output_throughput: 1e9 }).message).toMatch(
      /figures that cannot be true: .*output_tok_s/,
    );
  });

  it("files that hold nothing, or Python's bare NaN and Infinity", () => {
    for (const text of ["", "  \n\n"]) {
      expect(() => vllmResultsIn(text, "empty.json")).toThrow(/^empty\.json: the file is empty/);
    }
    expect(() => vllmResultsIn('{"a": 1}\n{oops', "bad.jsonl")).toThrow(/bad\.jsonl: line 2 is not JSON/);
    // vLLM's json.dump writes NaN for the means of a run where nothing completed
    const text = JSON.stringify({ ...summaryFixture(), std_ttft_ms: 1, label: "NaN Infinity" }).replace(
      '"std_ttft_ms":1',
      '"std_ttft_ms":NaN,"p90_itl_ms":-Infinity',
    );
    const [one] = vllmResultsIn(text, "nan.json");
    expect((one!.raw as Record<string, unknown>).std_ttft_ms).toBeNull();
    expect((one!.raw as Record<string, unknown>).label).toBe("NaN Infinity"); // strings are left alone
    expect(parseResultDocument(importVllm(one!.raw, one!.source)).levels[0]!.itl_ms.p90).toBeNull();
    const inf = vllmResultsIn(
      JSON.stringify(fixture()).replace(/"duration":[0-9.]+/, '"duration":Infinity'),
      "x.json",
    );
    expect(() => importVllm(inf[0]!.raw, inf[0]!.source)).toThrow(/duration must be .* found null/);
  });

  it("whatever is imported holds only finite numbers and passes the schema", () => {
    const variants = [
      fixture(),
      summaryFixture(),
      { ...fixture(), completed: 0, num_prompts: 16, output_throughput: 0, total_output_tokens: 0 },
      { ...summaryFixture(), request_goodput: null, total_token_throughput: null, request_throughput: null },
      {
        ...fixture(),
        duration: 1e-3,
        total_token_throughput: 0,
        request_throughput: 0,
        output_throughput: 0,
      },
    ];
    for (const raw of variants) {
      let doc: ReturnType<typeof importVllm>;
      try {
        doc = importVllm(raw, SOURCE);
      } catch (err) {
        expect(err).toBeInstanceOf(ImportError); // refused with a reason is fine; NaN is not
        continue;
      }
      parseResultDocument(doc);
      const bad = numbers(doc).filter((n) => !Number.isFinite(n.value));
      expect(bad).toEqual([]);
    }
  });
});

describe("export: a document with nothing to export is an error naming the file and field", () => {
  const example = () =>
    parseResultDocument(JSON.parse(readFileSync(resolve(ROOT, "schema/examples/closed-sweep.json"), "utf8")));

  it("no levels: both formats refuse, naming levels", () => {
    const doc = { ...example(), levels: [], complete: false };
    for (const exp of [exportGab, exportBencher]) {
      let caught: unknown;
      try {
        exp(doc, "runs/stopped.json");
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ExportError);
      expect((caught as ExportError).code).toBe("export_empty");
      expect((caught as Error).message).toMatch(/^runs\/stopped\.json: levels is empty/);
    }
  });

  it("exported values are the document's and finite; nothing null", () => {
    const doc = example();
    const { smaller, bigger } = exportGab(doc, "x.json");
    const all = [...smaller, ...bigger];
    expect(all.length).toBeGreaterThan(10);
    expect(all.every((e) => Number.isFinite(e.value))).toBe(true);
    const bmf = exportBencher(doc, "x.json");
    expect(numbers(bmf).every((n) => Number.isFinite(n.value))).toBe(true);
    expect(JSON.stringify(bmf)).not.toContain("null");
  });
});
