// TTFT split into queue, prefill and client from the server's own prompt time per request: the
// parts of a percentile are its band's mean shares scaled to it, no part is negative, and nothing
// is split where the server said nothing. Pure.
import { describe, expect, it } from "vitest";
import { e2eSplit, tpotSplit, ttftSplit } from "../../../src/core/results/ttft-split.ts";
import { rec } from "../../helpers/records.ts";

/** A request sent at 0 whose first token came at `ttft`, the server saying it spent `prompt` on the prompt. */
const req = (id: number, ttft: number, prompt: number | null, extra: Record<string, unknown> = {}) => ({
  ...rec({ id, send_ms: 0, events: [ttft, ttft + 5] }),
  ...(prompt === null ? {} : { server_timings: { prompt_ms: prompt, prompt_n: 200, ...extra } }),
});

describe("the TTFT split", () => {
  // 100 requests: TTFT 20 + i ms, of which 20 the prompt and i waiting for a slot
  const records = Array.from({ length: 100 }, (_, i) => req(i, 20 + i, 20));

  it("reads each percentile's band (40–60 %, 90–100 %), scaled to the percentile, the client's lateness apart", () => {
    const s = ttftSplit(records, { p50: 69.5, p95: 114 }, 1.5)!;
    expect(s.requests).toBe(100);
    // the p50 band is ranks 40..59: TTFT mean 69.5, prompt 20, wait 49.5 of which 1.5 the client's
    expect(s.p50.n).toBe(20);
    expect(s.p50.prefill_ms).toBeCloseTo(20, 9);
    expect(s.p50.client_ms).toBeCloseTo(1.5, 9);
    expect(s.p50.queue_ms).toBeCloseTo(48, 9);
    // the p95 band is ranks 90..99 (mean 114.5), scaled to the p95 given
    expect(s.p95.n).toBe(10);
    const k = 114 / 114.5;
    expect(s.p95.prefill_ms).toBeCloseTo(20 * k, 9);
    expect(s.p95.queue_ms! + s.p95.prefill_ms! + s.p95.client_ms!).toBeCloseTo(114, 9);
    expect(s.p95.uncached_tokens).toBe(200);
  });

  it("never makes a part negative: a prompt time over the measured TTFT is the whole TTFT, the client at most what was left", () => {
    const s = ttftSplit([req(0, 30, 45), req(1, 30, 45)], { p50: 30, p95: 30 }, 4)!;
    expect(s.p50).toMatchObject({ queue_ms: 0, prefill_ms: 30, client_ms: 0 });
  });

  it("is absent where no stream carried the server's prompt time; failures and warmups are not read", () => {
    expect(ttftSplit([req(0, 30, null), req(1, 40, null)], { p50: 35, p95: 40 }, 1)).toBeUndefined();
    const failed = {
      ...req(0, 30, 10),
      error: { code: "http_500", message: "x", phase: "headers" as const },
    };
    const warm = { ...req(1, 30, 10), warmup: true };
    expect(ttftSplit([failed, warm], { p50: 30, p95: 30 }, 1)).toBeUndefined();
    // a prompt time that is not a number is no prompt time
    expect(
      ttftSplit([{ ...req(0, 30, null), server_timings: { prompt_ms: "12" } }], { p50: 30, p95: 30 }, 0),
    ).toBeUndefined();
  });
});

describe("the E2E split", () => {
  /** TTFT 20 + i ms (prompt 20), then 50 ms to the last token, of which the server says `decode` was its decode. */
  const withDecode = (decode: number | null) =>
    Array.from({ length: 100 }, (_, i) => ({
      ...rec({ id: i, send_ms: 0, events: [20 + i, 70 + i] }),
      server_timings: { prompt_ms: 20, prompt_n: 200, ...(decode === null ? {} : { predicted_ms: decode }) },
    }));

  it("TTFT's parts, the server's decode, and the stream beyond it added to the client's: they sum to the percentile", () => {
    const s = e2eSplit(withDecode(48), { p50: 119.5, p95: 164 }, 1.5)!;
    expect(s.requests).toBe(100);
    // the p50 band (ranks 40..59): E2E mean 119.5 = queue 48 + prefill 20 + decode 48 + client 1.5 + 2
    expect(s.p50.queue_ms).toBeCloseTo(48, 9);
    expect(s.p50.prefill_ms).toBeCloseTo(20, 9);
    expect(s.p50.decode_ms).toBeCloseTo(48, 9);
    expect(s.p50.client_ms).toBeCloseTo(3.5, 9);
    const p = s.p95;
    expect(p.queue_ms! + p.prefill_ms! + p.decode_ms! + p.client_ms!).toBeCloseTo(164, 9);
  });

  it("a decode time over what the client saw between first token and last is capped there; none without one", () => {
    const s = e2eSplit(withDecode(60), { p50: 119.5, p95: 164 }, 0)!;
    expect(s.p50.decode_ms).toBeCloseTo(50, 9);
    expect(s.p50.client_ms).toBeCloseTo(0, 9);
    expect(e2eSplit(withDecode(null), { p50: 119.5, p95: 164 }, 0)).toBeUndefined();
    // the TTFT split needs only the prompt time
    expect(ttftSplit(withDecode(null), { p50: 69.5, p95: 114 }, 0)).toBeDefined();
  });
});

describe("the TPOT split", () => {
  it("the server's decode over the tokens after the first, the rest the client's; none without a decode time", () => {
    // 11 tokens over 50 ms after the first (TPOT 5 ms), the server's decode 40 ms of it (4 ms a token)
    const rs = Array.from({ length: 20 }, (_, i) => ({
      ...rec({ id: i, send_ms: 0, events: [20, 70], completion: 11 }),
      server_timings: { prompt_ms: 20, predicted_ms: 40 },
    }));
    const s = tpotSplit(rs, { p50: 5 })!;
    expect(s.requests).toBe(20);
    expect(s.p50.decode_ms).toBeCloseTo(4, 9);
    expect(s.p50.client_ms).toBeCloseTo(1, 9);
    const bare = rs.map((r) => ({ ...r, server_timings: { prompt_ms: 20 } }));
    expect(tpotSplit(bare, { p50: 5 })).toBeUndefined();
  });
});
