import { describe, expect, it } from "vitest";
import { type SseEvent, SseParser } from "../../../src/core/client/sse.ts";
import { rng } from "../../../src/core/workload/arrivals.ts";

const STREAM = [
  ": ping\n\n",
  'data: {"choices":[{"delta":{"role":"assistant"}}]}\n\n',
  'data: {"choices":[{"delta":{"content":"héllo ✓"}}]}\r\n\r\n',
  "event: message\ndata: first line\ndata: second line\n\n",
  ":comment without blank\n",
  'data:{"no_space":true}\n\n',
  "id: 7\nretry: 100\ndata: [DONE]\n\n",
].join("");

const EXPECTED: SseEvent[] = [
  { data: '{"choices":[{"delta":{"role":"assistant"}}]}', event: null },
  { data: '{"choices":[{"delta":{"content":"héllo ✓"}}]}', event: null },
  { data: "first line\nsecond line", event: "message" },
  { data: '{"no_space":true}', event: null },
  { data: "[DONE]", event: null },
];

function feed(parts: Buffer[]): SseEvent[] {
  const out: SseEvent[] = [];
  const p = new SseParser((e) => out.push(e));
  for (const b of parts) p.push(b);
  p.end();
  return out;
}

describe("SseParser", () => {
  const bytes = Buffer.from(STREAM, "utf8");

  it("parses a whole body in one read", () => {
    expect(feed([bytes])).toEqual(EXPECTED);
  });

  it("parses byte by byte (multi-byte UTF-8 characters split across reads)", () => {
    const parts = [...bytes].map((b) => Buffer.from([b]));
    expect(feed(parts)).toEqual(EXPECTED);
  });

  it("parses random splits", () => {
    const r = rng(42);
    for (let trial = 0; trial < 200; trial++) {
      const parts: Buffer[] = [];
      let i = 0;
      while (i < bytes.length) {
        const n = 1 + Math.floor(r() * 40);
        parts.push(bytes.subarray(i, i + n));
        i += n;
      }
      expect(feed(parts)).toEqual(EXPECTED);
    }
  });

  it("splits a CRLF pair across reads without producing an empty event", () => {
    const out = feed([Buffer.from("data: a\r"), Buffer.from("\n\r"), Buffer.from("\n")]);
    expect(out).toEqual([{ data: "a", event: null }]);
  });

  it("delivers many events from a single read in order", () => {
    const body = Array.from({ length: 500 }, (_, i) => `data: ${i}\n\n`).join("");
    const out = feed([Buffer.from(body)]);
    expect(out.map((e) => e.data)).toEqual(Array.from({ length: 500 }, (_, i) => String(i)));
  });

  it("delivers a final event that lacks its blank line at end of body", () => {
    expect(feed([Buffer.from("data: tail")])).toEqual([{ data: "tail", event: null }]);
  });

  it("ignores blank lines without data and comment-only streams", () => {
    expect(feed([Buffer.from("\n\n: keepalive\n\n\n")])).toEqual([]);
  });
});
