// Stream shapes in an order the grammar allows but a figure does not expect, through the CLI
// against a server that sends them: answer text before the reasoning, tool-call deltas whose index
// jumps or is huge, reasoning usage larger than the whole completion. Each is measured, the figure
// it leaves undefined is absent with a notice, and nothing measured is lost to the final check.
import { mkdtempSync, readFileSync } from "node:fs";
import type http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseResultDocument } from "../../../src/schema/v1.ts";
import { runCli } from "../../helpers/cli.ts";
import { rawServer } from "../../helpers/servers.ts";

const dir = mkdtempSync(join(tmpdir(), "tb-stream-order-"));
type Chunk = Record<string, unknown>;
const delta = (d: Chunk, finish: string | null = null): Chunk => ({
  id: "x",
  object: "chat.completion.chunk",
  model: "m",
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});

/**
 * The stream each path serves: its chunks (sent 2 ms apart, or `perWrite` of them in one write),
 * then the usage and [DONE].
 */
const STREAMS: Record<string, { chunks: Chunk[]; usage: Chunk; perWrite?: number }> = {
  // the whole answer in one event, as a server that does not stream
  "/one-piece": {
    chunks: [delta({ role: "assistant", content: " a b c d e f g h i j k l" })],
    usage: { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 },
  },
  // 16 events released four at a time, as a buffering proxy does
  "/bursts": {
    chunks: Array.from({ length: 16 }, (_, i) => delta({ content: ` w${i}` })),
    usage: { prompt_tokens: 10, completion_tokens: 16, total_tokens: 26 },
    perWrite: 4,
  },
  // a single "\n" of answer, then the reasoning, then the answer
  "/answer-first": {
    chunks: [
      delta({ role: "assistant", content: "\n" }),
      ...Array.from({ length: 4 }, (_, i) => delta({ reasoning_content: ` think${i}` })),
      ...Array.from({ length: 4 }, (_, i) => delta({ content: ` word${i}` })),
    ],
    usage: { prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 },
  },
  // one call's deltas at index 0, another's at 5, a third at 10^12
  "/tool-index": {
    chunks: [
      delta({
        role: "assistant",
        tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: "{" } }],
      }),
      delta({ tool_calls: [{ index: 0, function: { arguments: "}" } }] }),
      delta({ tool_calls: [{ index: 5, id: "b", function: { name: "g", arguments: "{}" } }] }),
      delta({ tool_calls: [{ index: 1e12, id: "c", function: { name: "h", arguments: "{}" } }] }),
    ],
    usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
  },
  // four reasoning events and four answer events, and usage claiming 500 reasoning tokens of 8
  "/usage-lies": {
    chunks: [
      ...Array.from({ length: 4 }, (_, i) => delta({ reasoning_content: ` think${i}` })),
      ...Array.from({ length: 4 }, (_, i) => delta({ content: ` word${i}` })),
    ],
    usage: {
      prompt_tokens: 10,
      completion_tokens: 8,
      total_tokens: 18,
      completion_tokens_details: { reasoning_tokens: 500 },
    },
  },
};

let server: Awaited<ReturnType<typeof rawServer>>;
beforeAll(async () => {
  server = await rawServer((req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    const path = (req.url ?? "").replace(/\/v1\/.*$/, "");
    if (req.url?.endsWith("/v1/models"))
      return res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ data: [{ id: "m" }] }));
    if (req.url?.endsWith("/health")) return res.writeHead(200).end("ok");
    const s = STREAMS[path];
    if (!s) return res.writeHead(404).end("no");
    req.on("end", async () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const per = s.perWrite ?? 1;
      for (let i = 0; i < s.chunks.length; i += per) {
        res.write(
          s.chunks
            .slice(i, i + per)
            .map((c) => `data: ${JSON.stringify(c)}\n\n`)
            .join(""),
        );
        await new Promise((r) => setTimeout(r, per > 1 ? 20 : 2));
      }
      res.write(`data: ${JSON.stringify({ ...delta({}, "stop"), usage: s.usage })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
});
afterAll(() => server?.close());

async function sweep(path: string) {
  const out = join(dir, `${path.slice(1)}.json`);
  const r = await runCli(
    [
      "sweep",
      "--base-url",
      `${server.url}${path}`,
      "--levels",
      "1",
      "--requests",
      "4",
      "--warmup",
      "0",
      "--max-tokens",
      "16",
      "--ignore-eos",
      "false",
      "--calibrate-prompts",
      "false",
      "--metrics-interval-ms",
      "0",
      "--out",
      out,
    ],
    { timeoutMs: 60_000 },
  );
  expect(r.code, r.stderr).toBe(0);
  return { ...r, doc: parseResultDocument(JSON.parse(readFileSync(out, "utf8"))) };
}

describe("stream orders the grammar allows", () => {
  it("answer text before the reasoning: measured and written; the reasoning time left out, said so", async () => {
    const { doc, stderr } = await sweep("/answer-first");
    const l = doc.levels[0]!;
    expect(l.ok).toBe(4);
    expect(l.reasoning_ms?.n ?? 0).toBe(0);
    expect(l.ttfat_ms!.n).toBeGreaterThan(0);
    expect(l.reasoning_tokens!.p50).toBe(4);
    expect(stderr).toMatch(
      /4 response\(s\) sent answer text before their reasoning: their reasoning time is left out/,
    );
  });

  it("tool-call deltas whose index jumps or is huge: each call counted once", async () => {
    const { doc } = await sweep("/tool-index");
    for (const r of doc.requests!.filter((x) => !x.warmup)) expect(r.tool_calls).toBe(3);
  });

  it("reasoning usage larger than the whole completion: not believed, the stream's count used, said so", async () => {
    const { doc, stderr } = await sweep("/usage-lies");
    for (const r of doc.requests!.filter((x) => !x.warmup)) {
      expect(r.reasoning_usage_ignored).toBe(500);
      expect(r.reasoning_tokens).toBe(4);
      expect(r.reasoning_tokens_source).toBe("events");
    }
    expect(stderr).toMatch(
      /reported more reasoning tokens in their usage \(500\) than their whole completion/,
    );
  });

  it("a whole answer in one event: ITL, TPOT and decode speed withheld (not 0.00), said so", async () => {
    const { doc, stderr } = await sweep("/one-piece");
    const l = doc.levels[0]!;
    expect(l.ok).toBe(4);
    for (const k of ["itl_ms", "tpot_ms", "decode_tok_s"] as const) expect(l[k].p50, k).toBeNull();
    expect(l.ttft_ms.p50).not.toBeNull();
    expect(l.validity!.reasons).toContainEqual(
      expect.objectContaining({ code: "buffered_stream", figure: 12 }),
    );
    // a reason of those rows only: it makes neither the level nor the run invalid
    expect(doc.validity!.reasons.map((r) => r.code)).not.toContain("buffered_stream");
    expect(stderr).toMatch(
      /the streams arrived in one piece: one event carried all 12 tokens .*: itl, tpot, decode withheld/,
    );
  });

  it("events released four at a time: ITL withheld, TPOT kept (the stream still spans time), said so", async () => {
    const { doc, stderr } = await sweep("/bursts");
    const l = doc.levels[0]!;
    expect(l.itl_ms.p50).toBeNull();
    expect(l.tpot_ms.p50!).toBeGreaterThan(1);
    expect(l.validity!.reasons).toContainEqual(
      expect.objectContaining({ code: "buffered_stream", affects: ["itl_p50_ms", "itl_p95_ms"] }),
    );
    expect(stderr).toMatch(
      /the streams arrived in bursts: \d+ % of the gaps between events were under 0\.05 ms, about [\d.]+ events per read/,
    );
  });
});
