import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { compareDocuments } from "../../../src/core/documents/compare.ts";
import { exportGab } from "../../../src/core/documents/export.ts";
import { ImportError, importVllm } from "../../../src/core/documents/import-vllm.ts";
import { parseResultDocument, type RequestRecord, type ResultDocument } from "../../../src/schema/v1.ts";
import { bootstrapQuantileDiff } from "../../../src/shared/statistics.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const read = (p: string) => JSON.parse(readFileSync(resolve(ROOT, p), "utf8"));

describe("import: vLLM bench serve --save-result", () => {
  it("detailed result: converts, validates, recomputes latencies from the per-request arrays", () => {
    const raw = read("test/fixtures/vllm-bench-serve.json");
    const doc = parseResultDocument(importVllm(raw));
    const l = doc.levels[0]!;
    expect(doc.config).toMatchObject({ mode: "closed", levels: [4], requests_per_level: 16 });
    expect(doc.target.model).toBe("Qwen/Qwen2.5-1.5B-Instruct");
    expect(doc.created_at).toBe("2026-11-20T10:15:00Z");
    expect(l.ttft_ms.n).toBe(16);
    expect(l.ttft_ms.p50).toBeCloseTo(raw.median_ttft_ms, 9); // same percentile definition for n even
    expect(l.ttft_ms.p99).toBeCloseTo(raw.p99_ttft_ms, 9);
    expect(l.tpot_ms.mean).toBeCloseTo(raw.mean_tpot_ms, 9);
    expect(l.itl_ms.n).toBe(16 * 63);
    expect(l.output_tok_s).toBeCloseTo(raw.output_throughput, 9);
    expect(l.notices.join(" ")).toMatch(/recomputed by tokenbench/);
  });

  it("summary-only result: keeps vLLM's figures, leaves unknown percentiles null", () => {
    const raw = read("test/fixtures/vllm-bench-serve-summary.json");
    const doc = parseResultDocument(importVllm(raw));
    const l = doc.levels[0]!;
    expect(l.ttft_ms.p50).toBe(raw.median_ttft_ms);
    expect(l.ttft_ms.p95).toBeNull();
    expect(l.e2e_ms.p99).toBe(raw.p99_e2el_ms);
  });

  it("rejects what is not a vLLM result", () => {
    expect(() => importVllm({ hello: 1 })).toThrow(ImportError);
    expect(() => importVllm([1])).toThrow(ImportError);
  });
});

describe("export: github-action-benchmark", () => {
  it("splits measures by direction with units", () => {
    const doc = parseResultDocument(read("schema/examples/closed-sweep.json"));
    const { smaller, bigger } = exportGab(doc);
    expect(smaller.find((e) => e.name === "closed c=4 ttft_p95_ms")).toMatchObject({ unit: "ms" });
    expect(bigger.find((e) => e.name === "closed c=4 output_tok_s")).toMatchObject({
      unit: "tok/s",
      value: doc.levels[1]!.output_tok_s,
    });
    expect(smaller.some((e) => e.name.endsWith("output_tok_s"))).toBe(false);
  });
});

describe("compare base.json head.json", () => {
  // Synthetic documents: one level, 200 requests with known TTFT distributions.
  function doc(ttftShiftMs: number, throughput: number, seed: number): ResultDocument {
    const base = parseResultDocument(read("schema/examples/closed-sweep.json"));
    let a = seed;
    const rnd = () => {
      a = (a * 1103515245 + 12345) % 2147483648;
      return a / 2147483648;
    };
    const reqs: RequestRecord[] = [];
    for (let i = 0; i < 200; i++) {
      const ttft = 50 + ttftShiftMs + 10 * rnd();
      const events = Array.from({ length: 8 }, (_, k) => 100 * i + ttft + 5 * k);
      reqs.push({
        ...base.requests![0]!,
        id: i,
        level: 1,
        warmup: false,
        send_ms: 100 * i,
        first_token_ms: events[0]!,
        last_token_ms: events[7]!,
        end_ms: events[7]! + 1,
        event_times_ms: events,
        event_text_chars: events.map(() => 3),
        usage: { prompt_tokens: 32, completion_tokens: 8, cached_tokens: null },
        error: null,
      });
    }
    const l = { ...base.levels[0]!, level: 1, output_tok_s: throughput };
    const ttfts = reqs.map((r) => r.first_token_ms! - r.send_ms).sort((x, y) => x - y);
    l.ttft_ms = { ...l.ttft_ms, p50: (ttfts[99]! + ttfts[100]!) / 2 };
    return { ...base, levels: [l], requests: reqs };
  }

  it("noise only -> unchanged", () => {
    const rows = compareDocuments([{ id: "base", doc: doc(0, 100, 1) }], {
      id: "head",
      doc: doc(0, 101, 2),
    }).rows;
    const ttft = rows.find((r) => r.measure === "ttft_p50_ms")!;
    expect(ttft.method).toBe("bootstrap");
    expect(ttft.verdict).toBe("unchanged");
    expect(rows.find((r) => r.measure === "output_tok_s")!.verdict).toBe("unchanged");
  });

  it("a real shift -> regressed or improved by direction", () => {
    const slower = compareDocuments([{ id: "base", doc: doc(0, 100, 1) }], {
      id: "head",
      doc: doc(8, 80, 2),
    }).rows;
    expect(slower.find((r) => r.measure === "ttft_p50_ms")!.verdict).toBe("regressed");
    expect(slower.find((r) => r.measure === "output_tok_s")!.verdict).toBe("regressed");
    const faster = compareDocuments([{ id: "base", doc: doc(8, 80, 1) }], {
      id: "head",
      doc: doc(0, 100, 2),
    }).rows;
    expect(faster.find((r) => r.measure === "ttft_p50_ms")!.verdict).toBe("improved");
    expect(faster.find((r) => r.measure === "output_tok_s")!.verdict).toBe("improved");
  });

  it("bootstrap interval covers the true difference and is deterministic per seed", () => {
    const base = Array.from({ length: 300 }, (_, i) => 100 + (i % 10));
    const head = base.map((x) => x + 5);
    const [lo, hi] = bootstrapQuantileDiff(base, head, 0.5, { seed: 3 });
    expect(lo).toBeLessThanOrEqual(5);
    expect(hi).toBeGreaterThanOrEqual(5);
    expect(bootstrapQuantileDiff(base, head, 0.5, { seed: 3 })).toEqual([lo, hi]);
  });
});

describe("the server's start, a run's measure", () => {
  const example = () =>
    parseResultDocument(
      JSON.parse(
        readFileSync(resolve(import.meta.dirname, "../../../schema/examples/closed-sweep.json"), "utf8"),
      ),
    );
  it("a slower start (the Action's server-command) regresses the server startup row; none without a start", () => {
    const at = (s: number): ResultDocument => ({ ...example(), startup: { answered_s: 1, ready_s: s } });
    const c = compareDocuments([{ id: "base", doc: at(20) }], { id: "head", doc: at(45) });
    const row = c.rows.find((r) => r.benchmark === "server startup" && r.measure === "startup_s")!;
    expect(row).toMatchObject({ base: 20, head: 45, verdict: "regressed" });
    const none = compareDocuments([{ id: "base", doc: example() }], { id: "head", doc: example() });
    expect(none.rows.some((r) => r.measure === "startup_s")).toBe(false);
  });
});
