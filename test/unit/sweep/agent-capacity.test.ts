// Agent capacity under a tier: the tier as declared, a probe judged by what it delivered, and the
// search over session counts (doubling to a failure, then bisection to one session); pure.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { agentCapacityHeadline } from "../../../src/core/results/report.ts";
import {
  agentCapacityOf,
  nextSessions,
  parseTier,
  type SessionsProbe,
  tierProbe,
} from "../../../src/core/sweep/agent-capacity.ts";
import type { LevelResult } from "../../../src/schema/v1.ts";

const GOLDEN = resolve(import.meta.dirname, "../../fixtures/golden/closed.json");
/** A measured level (the closed-loop golden's first) to change one figure of. */
const level = (o: { level: number }): LevelResult => ({
  ...(JSON.parse(readFileSync(GOLDEN, "utf8")).levels[0] as LevelResult),
  validity: { status: "valid", reasons: [] },
  ...o,
});

const tier = parseTier("interactive:2000:60");

function search(capacity: number, start: number, maxProbes = 12): SessionsProbe[] {
  const probes: SessionsProbe[] = [];
  for (
    let s = nextSessions(probes, { start, maxProbes });
    s !== null;
    s = nextSessions(probes, { start, maxProbes })
  )
    probes.push({ sessions: s, pass: s <= capacity });
  return probes;
}

describe("--agent-tier", () => {
  it("reads NAME:TTFT_P95_MS:TOK_S and refuses anything else with an example", () => {
    expect(tier).toEqual({ name: "interactive", ttft_p95_ms: 2000, tok_s_per_user: 60 });
    expect(parseTier("Batch:30000:7.5")).toEqual({ name: "batch", ttft_p95_ms: 30000, tok_s_per_user: 7.5 });
    for (const bad of ["interactive", "x:0:5", "x:100", "x:100:-1", "1x:1:1"])
      expect(() => parseTier(bad), bad).toThrow(
        /--agent-tier must be NAME:TTFT_P95_MS:TOK_S_PER_USER \(e\.g\./,
      );
  });
});

describe("the agent-capacity search", () => {
  it.each([
    [4, 1],
    [4, 4],
    [37, 1],
    [1, 8],
    [300, 16],
  ])(
    "finds a capacity of %i sessions from %i: the most that passed, one under the fewest that failed or within 3 %",
    (capacity, start) => {
      const probes = search(capacity, start);
      const lo = Math.max(0, ...probes.filter((p) => p.pass).map((p) => p.sessions));
      const hi = Math.min(...probes.filter((p) => !p.pass).map((p) => p.sessions));
      expect(lo).toBeLessThanOrEqual(capacity);
      expect(hi).toBeGreaterThan(capacity);
      expect(hi - lo <= 1 || (hi - lo) / hi <= 0.03).toBe(true);
      expect(lo).toBeGreaterThanOrEqual(capacity * 0.97);
      expect(probes.length).toBeLessThanOrEqual(12);
    },
  );

  it("a server that fails one session ends at one probe below: capacity 0", () => {
    const probes = search(0, 4);
    expect(probes.map((p) => p.sessions)).toEqual([4, 2, 1]);
  });

  it("stops at the probes allowed", () => {
    expect(search(1000, 1, 5).map((p) => p.sessions)).toEqual([1, 2, 4, 8, 16]);
  });
});

describe("a probe as the tier judges it", () => {
  const good = (): LevelResult => {
    const l = level({ level: 6 });
    l.ttft_ms = { ...l.ttft_ms, p95: 1500 };
    l.decode_tok_s = { ...l.decode_tok_s, p50: 80 };
    l.errors = 0;
    l.ok = 200;
    return l;
  };
  it("passes within the tier; fails on TTFT p95, speed per user, errors, an invalid or unsteady level", () => {
    expect(tierProbe(good(), tier)).toEqual({ sessions: 6, pass: true });
    const slow = good();
    slow.ttft_ms = { ...slow.ttft_ms, p95: 2100 };
    const crawl = good();
    crawl.decode_tok_s = { ...crawl.decode_tok_s, p50: 59 };
    const failing = good();
    failing.errors = 3;
    const invalid = good();
    invalid.validity = { status: "invalid", reasons: [] };
    for (const l of [slow, crawl, failing, invalid]) expect(tierProbe(l, tier).pass).toBe(false);
  });

  it("a level invalid only for its client's lateness passes when the tier holds with the lateness charged, else fails and says the client was the bottleneck", () => {
    const late = (l: LevelResult, lateMs: number, also: LevelResult["validity"] = undefined) => {
      l.validity = {
        status: "invalid",
        reasons: [
          { code: "client_bound", affects: ["latency"], figure: lateMs, bound: 20, text: "client-bound" },
          { code: "too_few_samples", affects: ["ttft_p99_ms"], figure: 86, bound: 299, text: "p99" },
          ...(also?.reasons ?? []),
        ],
      };
      return l;
    };
    // 31 decode tokens at 80 tok/s span 387.5 ms; 29 ms more is 74.5 tok/s, still over 60
    const ok = good();
    ok.completion_tokens_total = 32 * ok.ok;
    expect(tierProbe(late(ok, 29), tier)).toEqual({ sessions: 6, pass: true });
    // 150 ms more: 31 / 0.5375 s = 57.7 tok/s, under 60: the server may be as fast, not shown
    const near = good();
    near.completion_tokens_total = 32 * near.ok;
    expect(tierProbe(late(near, 150), tier)).toEqual({ sessions: 6, pass: false, clientBound: true });
    // a reason of the server's beside the client's: a plain failure
    const behind = good();
    behind.completion_tokens_total = 32 * behind.ok;
    const fell = {
      status: "invalid" as const,
      reasons: [
        { code: "fell_behind" as const, affects: ["latency"], figure: 5, bound: 6, text: "fell behind" },
      ],
    };
    expect(tierProbe(late(behind, 29, fell), tier)).toEqual({ sessions: 6, pass: false });
    // the headline names a failing count the client was the bottleneck of
    const c = agentCapacityOf([good(), { ...near, level: 7 }], tier);
    expect(c.bracket_sessions).toEqual([6, 7]);
    expect(agentCapacityHeadline(c, 2, [good(), { ...near, level: 7 }])).toMatch(
      /^6 concurrent sessions @ interactive .*; 7 failed while the client was the bottleneck \(the capacity may be higher: more --workers, or a quieter runner\)$/,
    );
    expect(agentCapacityHeadline(c, 2, [])).toMatch(/; 7 failed$/);
  });

  it("the capacity is the most sessions that passed, with per GPU and per kW where the telemetry read them", () => {
    const at6 = good();
    const at7 = good();
    at7.level = 7;
    at7.ttft_ms = { ...at7.ttft_ms, p95: 2500 };
    const c = agentCapacityOf([at6, at7], tier);
    expect(c).toMatchObject({
      max_sessions: 6,
      bracket_sessions: [6, 7],
      ttft_p95_ms_at_max: 1500,
      per_gpu: null,
    });
  });
});
