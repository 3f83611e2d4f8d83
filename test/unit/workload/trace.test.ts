import { describe, expect, it } from "vitest";
import {
  parseTrace,
  TRACE_BLOCK_TOKENS,
  traceDataset,
  traceRateRps,
} from "../../../src/core/workload/trace.ts";
import type { PromptCalibration } from "../../../src/schema/v1.ts";

const line = (o: Record<string, unknown>) => JSON.stringify(o);
const TRACE = [
  line({ timestamp: 300, input_length: 700, output_length: 5, hash_ids: [7, 8] }),
  line({ timestamp: 100, input_length: 1100, output_length: 9, hash_ids: [7, 9, 10] }),
  line({ timestamp: 200, input_length: 40, output_length: 3 }),
].join("\n");

describe("trace replay: parsing and building", () => {
  it("orders requests by time; offsets start at 0 and divide by the speed; the rate is over the replayed span", () => {
    const t = parseTrace(TRACE, "t.jsonl");
    expect(t.rows.map((r) => r.timestampMs)).toEqual([100, 200, 300]);
    const d = traceDataset(t, { speed: 2, requests: null, durationS: null, seed: 1 }, null);
    expect(d.offsetsMs).toEqual([0, 50, 100]);
    expect(traceRateRps(d.offsetsMs!)).toBe(20);
    expect(traceDataset(t, { speed: 1, requests: 2, durationS: null, seed: 1 }, null).entries).toHaveLength(
      2,
    );
    expect(
      traceDataset(t, { speed: 1, requests: null, durationS: 0.15, seed: 1 }, null).entries,
    ).toHaveLength(2);
  });

  it("a hash id is the same words wherever it appears; a short last block is a prefix of the full one", () => {
    const d = traceDataset(
      parseTrace(TRACE, "t.jsonl"),
      { speed: 1, requests: null, durationS: null, seed: 1 },
      null,
    );
    const words = d.entries.map((e) => e.prompt!.split(" "));
    expect(words.map((w) => w.length)).toEqual([1100, 40, 700]);
    const block = (w: string[], k: number) => w.slice(k * TRACE_BLOCK_TOKENS, (k + 1) * TRACE_BLOCK_TOKENS);
    expect(block(words[0]!, 0)).toEqual(block(words[2]!, 0)); // id 7 in both
    expect(block(words[0]!, 1)).not.toEqual(block(words[2]!, 1).slice(0, 512)); // 9 vs 8
    expect(d.entries.map((e) => [e.outputTokens, e.promptTokens])).toEqual([
      [9, 1100],
      [3, 40],
      [5, 700],
    ]);
  });

  it("with a calibration, blocks and lengths are sized in the server's tokens", () => {
    const cal = { words: 100, target_tokens: 125, tokens_per_word: 1.25 } as PromptCalibration;
    const d = traceDataset(
      parseTrace(TRACE, "t.jsonl"),
      { speed: 1, requests: null, durationS: null, seed: 1 },
      cal,
    );
    // 1100 tokens: 100 + (1100 - 125) / 1.25 = 880 words; blocks of 512 / 1.25 = 410 words
    expect(d.entries[0]!.prompt!.split(" ").length).toBe(880);
  });

  it("names the file and line of a bad row", () => {
    expect(() =>
      parseTrace('{"timestamp": 1, "input_length": 10, "output_length": 2, "hash_ids": [1, 2]}', "x.jsonl"),
    ).toThrow(/x\.jsonl: line 1: 2 hash_ids of 512 tokens are more than input_length 10 holds/);
    expect(() => parseTrace("{}\n", "x.jsonl")).toThrow(/line 1: "timestamp" must be/);
    expect(() => parseTrace("\n", "x.jsonl")).toThrow(/no request in it/);
  });
});
