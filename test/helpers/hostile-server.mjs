// A misbehaving OpenAI-compatible server for the hostile corpus (#11), run in its own process.
// Each behaviour lives under a path prefix, so one server serves them all:
//   http://127.0.0.1:PORT/<behaviour>/health, /<behaviour>/v1/models, /<behaviour>/v1/chat/completions
// It shares no code with tokenbench (src/mock included): what it sends is written out here.
import http from "node:http";
import { gzipSync } from "node:zlib";

const counts = {};
/** Bodies of the completion requests under /record/, for tests that check what was sent. */
const recorded = [];
const chunk = (content, extra = {}) =>
  `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra })}\n\n`;
const usage = (u) =>
  `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [], usage: u })}\n\n`;
const SSE = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** Answer with one byte every `everyMs`, for ever (until the client goes away). */
function trickle(res, everyMs = 250) {
  res.writeHead(200, { "content-type": "application/json" });
  const t = setInterval(() => res.write(" "), everyMs);
  res.on("close", () => clearInterval(t));
}

function goodStream(res, u = { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 }) {
  res.writeHead(200, SSE);
  res.write(chunk("a"));
  res.write(chunk("b"));
  res.write(chunk("c"));
  res.write(usage(u));
  res.end("data: [DONE]\n\n");
}

const modelsBody = (n = 1) =>
  JSON.stringify({
    object: "list",
    data: Array.from({ length: n }, (_, i) => ({
      id: i === 0 ? "hostile" : `model-${i}-${"x".repeat(40)}`,
      object: "model",
    })),
  });

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  const [, behaviour, ...rest] = url.pathname.split("/");
  const path = `/${rest.join("/")}`;
  let raw = "";
  req.on("data", (d) => {
    raw += d;
  });
  // each body with the time it arrived (this process's monotonic clock, ms): send times vs a trace
  const arrivedMs = performance.now();
  if (behaviour === "record" && path === "/v1/chat/completions")
    req.on("end", () => {
      try {
        recorded.push({
          ...JSON.parse(raw),
          _arrived_ms: arrivedMs,
          _request_id: req.headers["x-tokenbench-request-id"] ?? null,
        });
      } catch {}
    });
  const key = `${behaviour} ${req.method} ${path}`;
  counts[key] = (counts[key] ?? 0) + 1;
  if (behaviour === "recorded") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(recorded));
  }
  if (behaviour === "stats") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(counts));
  }
  // ---- endpoints other than the measured stream --------------------------------------------
  if (path === "/health") {
    if (behaviour === "trickle-health") return trickle(res);
    res.writeHead(200, { "content-type": "application/json" });
    return res.end('{"status":"ok"}');
  }
  if (path === "/v1/models") {
    if (behaviour === "trickle-models") return trickle(res);
    res.writeHead(200, { "content-type": "application/json" });
    // ~5 MB: tens of thousands of models
    return res.end(modelsBody(behaviour === "huge-models" ? 80_000 : 1));
  }
  if (path === "/metrics") {
    if (behaviour === "trickle-metrics") return trickle(res);
    res.writeHead(200, { "content-type": "text/plain" });
    return res.end("vllm:num_requests_running 0\nvllm:num_requests_waiting 0\n");
  }
  if (path !== "/v1/chat/completions") {
    res.writeHead(404, { "content-type": "application/json" });
    return res.end('{"error":{"message":"not found"}}');
  }
  // ---- the measured stream -----------------------------------------------------------------
  switch (behaviour) {
    case "endless": {
      res.writeHead(200, SSE);
      const piece = chunk("x".repeat(4000)).repeat(16);
      const pump = () => {
        while (res.write(piece)) {}
      };
      res.on("drain", pump);
      res.on("close", () => res.removeAllListeners("drain"));
      return pump();
    }
    case "long-line": {
      res.writeHead(200, SSE);
      res.write('data: {"choices":[{"delta":{"content":"');
      const piece = "y".repeat(64 * 1024);
      const pump = () => {
        while (res.write(piece)) {}
      };
      res.on("drain", pump);
      res.on("close", () => res.removeAllListeners("drain"));
      return pump();
    }
    case "fractional":
      return goodStream(res, { prompt_tokens: 4, completion_tokens: 8.5, total_tokens: 12.5 });
    case "negative":
      return goodStream(res, { prompt_tokens: -3, completion_tokens: 3, total_tokens: 0 });
    case "gzip": {
      const body = gzipSync(
        chunk("a") + chunk("b") + usage({ prompt_tokens: 4, completion_tokens: 2 }) + "data: [DONE]\n\n",
      );
      res.writeHead(200, { ...SSE, "content-encoding": "gzip" });
      return res.end(body);
    }
    case "zero-tokens": {
      // an answer with no token: a role chunk, finish_reason stop, usage with 0 completion tokens
      res.writeHead(200, SSE);
      res.write(
        `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`,
      );
      res.write(
        `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
      );
      res.write(usage({ prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 }));
      return res.end("data: [DONE]\n\n");
    }
    case "zero-usage":
      // text streamed, and a usage that counts none of it
      return goodStream(res, { prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
    case "bare-json-error": {
      // 200 and an event-stream content type, but the body is a JSON error, not SSE
      res.writeHead(200, SSE);
      return res.end('{"error":{"message":"model is overloaded, retry later","type":"overloaded"}}\n');
    }
    case "comments-only": {
      res.writeHead(200, SSE);
      return res.end(": keep-alive\n\n: keep-alive\n\n");
    }
    case "redirect": {
      res.writeHead(307, {
        location: "https://infer.example/v1/chat/completions",
        "content-type": "text/html",
      });
      return res.end("<a>moved</a>");
    }
    case "close-mid": {
      res.writeHead(200, SSE);
      res.write(chunk("a"));
      res.write(chunk("b"));
      return setTimeout(() => res.socket?.destroy(), 50);
    }
    case "slow": {
      // a long, well-formed stream: 60 chunks, one every 50 ms (3 s)
      res.writeHead(200, SSE);
      let i = 0;
      const t = setInterval(() => {
        if (++i > 60) {
          clearInterval(t);
          res.write(usage({ prompt_tokens: 4, completion_tokens: 60, total_tokens: 64 }));
          return res.end("data: [DONE]\n\n");
        }
        res.write(chunk("s"));
      }, 50);
      res.on("close", () => clearInterval(t));
      return;
    }
    case "slow-ish": {
      // 5 chunks 20 ms apart: about 100 ms a request
      res.writeHead(200, SSE);
      let i = 0;
      const t = setInterval(() => {
        if (++i > 5) {
          clearInterval(t);
          res.write(usage({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 }));
          return res.end("data: [DONE]\n\n");
        }
        res.write(chunk("s"));
      }, 20);
      res.on("close", () => clearInterval(t));
      return;
    }
    default:
      return goodStream(res);
  }
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
