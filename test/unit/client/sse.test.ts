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

/** The standard's own corner cases, one by one ("interpreting an event stream"). */
describe("SseParser against the standard's rules", () => {
  const one = (s: string) => feed([Buffer.from(s, "utf8")]);
  it.each([
    [
      "bare CR line ends",
      "data: a\rdata: b\r\rdata: c\r\r",
      [
        ["a\nb", null],
        ["c", null],
      ],
    ],
    ["CRLF line ends", "data: a\r\n\r\n", [["a", null]]],
    [
      "mixed line ends",
      "data: a\ndata: b\r\n\rdata: c\r\n\n",
      [
        ["a\nb", null],
        ["c", null],
      ],
    ],
    ["a leading byte-order mark", "\uFEFFdata: a\n\n", [["a", null]]],
    ["a BOM only at the very start", "data: a\n\n\uFEFFdata: b\n\n", [["a", null]]],
    ["data without the space", "data:a\n\n", [["a", null]]],
    ["only one leading space is removed", "data:  a\n\n", [[" a", null]]],
    ["a line without colon is a field with an empty value", "data\n\n", [["", null]]],
    ["an empty event name is no name", "event:\ndata: a\n\n", [["a", null]]],
    ["field names are case-sensitive", "Data: a\n\ndata: b\n\n", [["b", null]]],
    ["id and retry are ignored", "id: 1\nretry: 10\ndata: a\n\n", [["a", null]]],
    [
      "an event name without data dispatches nothing, and is forgotten",
      "event: x\n\ndata: a\n\n",
      [["a", null]],
    ],
    ["comments anywhere", ": hi\ndata: a\n: between\ndata: b\n\n", [["a\nb", null]]],
  ] as [string, string, [string, string | null][]][])("%s", (_name, body, want) => {
    const got = one(body).map((e) => [e.data, e.event]);
    expect(got).toEqual(want);
    // byte by byte too: every rule holds across reads
    const bytes = Buffer.from(body, "utf8");
    const split = feed([...bytes].map((b) => Buffer.from([b]))).map((e) => [e.data, e.event]);
    expect(split).toEqual(want);
  });

  it("a CR at the end of one read and an LF at the start of the next are one line end", () => {
    const out = feed([Buffer.from("data: a\r"), Buffer.from("\ndata: b\r"), Buffer.from("\n\r\n")]);
    expect(out).toEqual([{ data: "a\nb", event: null }]);
  });

  it("a BOM split across reads is still dropped", () => {
    const b = Buffer.from("\uFEFFdata: a\n\n", "utf8");
    expect(feed([b.subarray(0, 1), b.subarray(1, 2), b.subarray(2)])).toEqual([{ data: "a", event: null }]);
  });
});

/** Random streams, split at random byte boundaries: the same events as a well-kept parser. */
describe("SseParser differentially against eventsource-parser", () => {
  const FIELDS = ["data", "data", "data", "event", "id", "retry", "Data", "x-unknown"];
  const VALUES = ["", "a", " spaced", "  two", "héllo ✓", "[DONE]", '{"choices":[]}', "a:b", "€𝄞"];
  const ENDS = ["\n", "\r", "\r\n"];

  function randomStream(r: () => number): string {
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
    let s = r() < 0.2 ? "\uFEFF" : "";
    const lines = 5 + Math.floor(r() * 40);
    for (let i = 0; i < lines; i++) {
      const x = r();
      const end = pick(ENDS);
      if (x < 0.15) s += end;
      else if (x < 0.22) s += `:${pick(VALUES)}${end}`;
      else if (x < 0.3) s += `${pick(FIELDS)}${end}`;
      else if (x < 0.4) s += `${pick(FIELDS)}:${pick(VALUES)}${end}`;
      else s += `${pick(FIELDS)}: ${pick(VALUES)}${end}`;
    }
    return `${s}\n\n`;
  }

  it("gives the same events for 500 random streams at random splits", async () => {
    const { createParser } = await import("eventsource-parser");
    const r = rng(7);
    let events = 0;
    for (let trial = 0; trial < 500; trial++) {
      const body = Buffer.from(randomStream(r), "utf8");
      const ref: [string, string | null][] = [];
      const p = createParser({ onEvent: (e) => ref.push([e.data, e.event ?? null]) });
      // the reference takes text: decoded whole as the standard says (TextDecoder drops the BOM)
      p.feed(new TextDecoder().decode(body));
      p.reset({ consume: true });
      const parts: Buffer[] = [];
      for (let i = 0; i < body.length; ) {
        const n = 1 + Math.floor(r() * 12);
        parts.push(body.subarray(i, i + n));
        i += n;
      }
      const ours = feed(parts).map((e) => [e.data, e.event] as [string, string | null]);
      expect(ours, body.toString("utf8")).toEqual(ref);
      events += ours.length;
    }
    expect(events).toBeGreaterThan(1000);
  });
});
