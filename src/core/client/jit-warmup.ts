/**
 * Compile the client's hot path before the first measurement. V8 optimizes a function after
 * enough calls; at 100 chunks/s (one stream) that takes about half a minute, during which the
 * client spends about twice its steady CPU per chunk and its event loop has longer busy stretches.
 * A sweep's first level is usually its one-user level, so it would pay that. Streaming 80,000
 * chunks from a loopback server in this process through a StreamClient of the same API kind
 * (undici, the SSE parser, the chunk reader, the record) takes under a second and brings the
 * first seconds' cost per chunk near the steady one (`bench/self-check.ts` measures both, and
 * bench/README.md quotes them). Nothing of it reaches the measured server or the results.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { makeTarget } from "../server/target.ts";
import { type ClientConfig, StreamClient } from "./stream-client.ts";

/** Chunks streamed in all (over REQUESTS requests): enough to get the path optimized. */
export const WARMUP_CHUNKS = 80_000;
const REQUESTS = 4;
/** Writes between two yields, so the client (same event loop) reads as the server writes. */
const BURST = 50;

type Api = "chat" | "completions" | "responses" | "messages";

/** One content event in the API's own shape, as the client will read it from the server. */
function chunkEvent(api: Api, i: number): string {
  const text = ` w${i % 97}`;
  if (api === "messages")
    return `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })}\n\n`;
  if (api === "responses")
    return `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", item_id: "warmup", output_index: 0, content_index: 0, delta: text })}\n\n`;
  const choice =
    api === "chat"
      ? { index: 0, delta: { content: text }, finish_reason: null }
      : { index: 0, text, finish_reason: null };
  const object = api === "chat" ? "chat.completion.chunk" : "text_completion";
  return `data: ${JSON.stringify({ id: "warmup", object, created: 0, model: "warmup", choices: [choice] })}\n\n`;
}

/** The stream's end: the usage, then [DONE] (the Responses and Messages APIs: their terminal events). */
function endEvents(api: Api, tokens: number): string {
  if (api === "messages") {
    const usage = { input_tokens: 8, output_tokens: tokens };
    const delta = { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage };
    return `event: message_delta\ndata: ${JSON.stringify(delta)}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
  }
  if (api === "responses") {
    const usage = { input_tokens: 8, output_tokens: tokens, total_tokens: tokens + 8 };
    return `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", response: { id: "warmup", status: "completed", usage } })}\n\n`;
  }
  const usage = { prompt_tokens: 8, completion_tokens: tokens, total_tokens: tokens + 8 };
  return `data: ${JSON.stringify({ id: "warmup", choices: [], usage })}\n\ndata: [DONE]\n\n`;
}

function serve(perRequest: number) {
  return (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", async () => {
      const url = req.url ?? "";
      const api: Api = url.includes("chat")
        ? "chat"
        : url.includes("responses")
          ? "responses"
          : url.includes("messages")
            ? "messages"
            : "completions";
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (let i = 0; i < perRequest; i++) {
        res.write(chunkEvent(api, i));
        if (i % BURST === BURST - 1) await new Promise((r) => setImmediate(r));
      }
      res.end(endEvents(api, perRequest));
    });
  };
}

/**
 * Stream `chunks` chunks through a client configured like `cfg` (its API kind and options; a
 * loopback server of this process instead of the target). Returns the chunks read and the
 * milliseconds taken, or null when the loopback server could not be used (the run goes on
 * without: the warm-up only saves CPU).
 */
export async function warmUpClientPath(
  cfg: ClientConfig,
  chunks = WARMUP_CHUNKS,
): Promise<{ chunks: number; ms: number } | null> {
  const t0 = performance.now();
  const server = createServer(serve(Math.ceil(chunks / REQUESTS)));
  try {
    await new Promise<void>((res, rej) => {
      server.once("error", rej);
      server.listen(0, "127.0.0.1", () => res());
    });
    const { port } = server.address() as AddressInfo;
    const client = new StreamClient({
      ...cfg,
      target: makeTarget({
        baseUrl: `http://127.0.0.1:${port}`,
        api: cfg.target.api,
        model: "warmup",
        apiKey: null,
        headers: {},
      }),
      originMs: performance.now(),
    });
    let read = 0;
    try {
      for (let i = 0; i < REQUESTS; i++) {
        const r = await client.stream({
          id: i,
          level: 0,
          warmup: true,
          prompt: "warm up",
          // what the loopback server sends (a usage above twice max_tokens is refused as untrue)
          maxTokens: Math.ceil(chunks / REQUESTS),
          promptTokensRequested: null,
          intendedSendAbsMs: null,
        });
        if (r.error !== null) return null;
        read += r.event_count;
      }
    } finally {
      await client.close();
    }
    return { chunks: read, ms: performance.now() - t0 };
  } catch {
    return null;
  } finally {
    server.close();
  }
}
