// Servers that echo the request's credentials back in their error bodies, as a misconfigured
// proxy or a chatty error page does: the hostile case for secrets in logs.
import type http from "node:http";
import { rawServer } from "./servers.ts";

const credentials = (req: http.IncomingMessage) =>
  `authorization=${req.headers.authorization ?? ""} x-api-key=${req.headers["x-api-key"] ?? ""}`;

/** An OpenAI-compatible server whose streams fail with HTTP 500 echoing the request's credentials. */
export function echoingInferenceServer() {
  return rawServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      if (req.url === "/health") return res.writeHead(200).end("ok");
      if (req.url?.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ data: [{ id: "echo-model" }] }));
      }
      const b = body ? (JSON.parse(body) as { stream?: boolean }) : {};
      if (b.stream)
        return res
          .writeHead(500, { "content-type": "text/plain" })
          .end(`upstream refused ${credentials(req)}`);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "length" }],
          usage: { prompt_tokens: 16, completion_tokens: 1, total_tokens: 17 },
        }),
      );
    });
  });
}

/** A results service that refuses every call, quoting the credentials it was sent (JSON for POST, HTML for GET). */
export function echoingResultsService() {
  return rawServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "POST") {
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(
          JSON.stringify({ error: { code: "bad_token", message: `not accepted: ${credentials(req)}` } }),
        );
      }
      res
        .writeHead(403, { "content-type": "text/html" })
        .end(`<html><body>forbidden for ${credentials(req)}</body></html>`);
    });
  });
}
