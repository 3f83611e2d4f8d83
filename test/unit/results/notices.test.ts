import { describe, expect, it } from "vitest";
import { clientNotice, levelNotice, noticeWriter, splitNotice } from "../../../src/core/results/notices.ts";
import type { LevelResult } from "../../../src/schema/v1.ts";

const client = (over: Record<string, unknown>) =>
  ({
    event_loop_delay_ms: { p50: 1, p99: 10, max: 11 },
    own_delay_ms: { p50: 1, p99: 8, max: 9 },
    send_queue_ms: { p50: null, p99: null, max: null },
    lateness_bound_ms: 23,
    cpu_user_s: 1,
    cpu_system_s: 0,
    cpu_pct_of_one_core: 40,
    bottleneck_warning: null,
    timing_note: null,
    ...over,
  }) as Parameters<typeof clientNotice>[0];

describe("notices as printed", () => {
  it("a level's notices are one line; the same notice twice is said once", () => {
    const lines: string[] = [];
    const w = noticeWriter((l) => lines.push(l));
    w("prompts: 256 words give 256 prompt tokens");
    w(levelNotice(8, ["no steady state (the window lasted 0.5 s)", "8 of 8 answers stopped short"]));
    w(levelNotice(8, ["no steady state (the window lasted 0.5 s)", "8 of 8 answers stopped short"]));
    expect(lines).toEqual([
      "prompts: 256 words give 256 prompt tokens",
      "level 8: no steady state (the window lasted 0.5 s); 8 of 8 answers stopped short",
    ]);
  });

  it("the machine's timing noise: in full once, then only when it moved by more than half", () => {
    const lines: string[] = [];
    const w = noticeWriter((l) => lines.push(l));
    const note = (ms: number) =>
      clientNotice(
        client({
          timing_note: `timing noise: the client read about ${ms} ms late (p99 estimate; at most 30 ms) while busy 5 % of the time`,
        }),
      )!;
    w(levelNotice(1, [note(8)]));
    w(levelNotice(2, [note(10)]));
    w(levelNotice(4, ["no steady state", note(9)]));
    w(levelNotice(8, [note(20)]));
    expect(lines).toEqual([
      "level 1: timing noise: the client read about 8.0 ms late (p99) because the machine woke it late, not from its own work (--workers would not help); TTFT and ITL carry up to that much (said once; each level's reading is in the JSON)",
      "level 4: no steady state",
      "level 8: timing noise now about 20.0 ms (was 8.0 ms)",
    ]);
  });

  it("the client as the bottleneck: one figure (how late it read) and what it means", () => {
    expect(
      clientNotice(
        client({ bottleneck_warning: "the client may be the bottleneck (reads late by about …)" }),
      ),
    ).toBe(
      "the client may be the bottleneck: busy with its own work, it read the stream up to 23.0 ms late, so TTFT and ITL may be that much high (more --workers; the figures are under levels[].client)",
    );
    expect(clientNotice(client({}))).toBeNull();
    const silent: string[] = [];
    noticeWriter((l) => silent.push(l), true)("level 1: anything");
    expect(silent).toEqual([]);
  });
});

describe("what the server did not say of its own times: one line per run", () => {
  const parts = { n: 1, queue_ms: 1, prefill_ms: 1, client_ms: 1, uncached_tokens: null };
  const timed = { ttft_split: { source: "server_timings", requests: 1, p50: parts, p95: parts } };
  const means = (prefill: number | null, decode: number | null) => ({
    server_means: {
      source: "metrics",
      window: "steady",
      from_ms: 0,
      to_ms: 1,
      requests: 4,
      queue_ms: 1,
      prefill_ms: prefill,
      decode_ms: decode,
      ttft_ms: 2,
      e2e_ms: 3,
      prefix_cache_hit_pct: null,
    },
  });
  const lv = (x: object) => [x as unknown as LevelResult];

  it("nothing to say where it gave what every split needs", () => {
    expect(
      splitNotice(
        lv({
          ...timed,
          e2e_split: {
            ...timed.ttft_split,
            p50: { ...parts, decode_ms: 1 },
            p95: { ...parts, decode_ms: 1 },
          },
        }),
        false,
      ),
    ).toBeNull();
    expect(splitNotice(lv(means(1, 1)), true)).toBeNull();
    expect(splitNotice([], true)).toBeNull();
  });

  it("names what it lacked: no decode time, no histograms (or no scrapes), a phase missing", () => {
    expect(splitNotice(lv(timed), false)).toMatch(/prompt time but no decode time/);
    expect(splitNotice(lv({}), true)).toMatch(/no per-request timings .* no phase histograms/);
    expect(splitNotice(lv({}), false)).toMatch(/were not sampled \(--metrics-interval-ms 0\)/);
    expect(splitNotice(lv(means(null, null)), true)).toMatch(/have no prefill or decode time histogram/);
  });
});
