/**
 * The mock inference server: OpenAI-compatible streaming with a timing and capacity model
 * (engine.ts), vLLM/SGLang/FreeToken/llama.cpp flavours (flavors/*.ts), seeded faults and
 * Prometheus `/metrics`. Written on node:http alone and sharing nothing with src/core.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { Engine } from "./engine.ts";
import { HttpError, promptOf, readJson, sendError, sendJson } from "./http.ts";
import { DEFAULT_MOCK_OPTIONS, type MockOptions } from "./options.ts";
import { Exposition } from "./prometheus.ts";

import type { MockApi, MockStats } from "./request.ts";

const API_ROUTES: Record<string, MockApi> = {
  "/v1/chat/completions": "chat",
  "/v1/completions": "completions",
  "/v1/responses": "responses",
  "/v1/messages": "messages",
};

export type { MockStats } from "./request.ts";

export interface MockServer {
  url: string;
  port: number;
  options: MockOptions;
  stats(): MockStats;
  close(): Promise<void>;
}

export async function start(partial: Partial<MockOptions> = {}): Promise<MockServer> {
  const o: MockOptions = { ...DEFAULT_MOCK_OPTIONS, ...partial };
  if (partial.port === undefined) o.port = 0;
  const engine = new Engine(o);
  const server = http.createServer({ keepAliveTimeout: 30_000, noDelay: true }, (req, res) => {
    handle(engine, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, String(err), "internal_error");
      else res.destroy();
    });
  });
  server.maxHeadersCount = 200;
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    port,
    options: o,
    stats: () => engine.stats(),
    close: async () => {
      engine.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function models(o: MockOptions): unknown {
  return {
    object: "list",
    data: [
      {
        id: o.model,
        object: "model",
        created: Math.floor(Date.now() / 1000),
        owned_by: o.flavor,
        max_model_len: o.maxModelLen,
      },
    ],
  };
}

/** The Prometheus exposition: the flavour's metrics, then the mock's own fault counters. */
function metricsText(e: Engine): string {
  const x = new Exposition(e.flavor.metricLabels(e.o));
  e.flavor.metrics(x, e);
  const faults = Object.entries(e.faultCounts).map(([kind, n]): [Record<string, string>, number] => [
    { kind },
    n,
  ]);
  x.series("tokenbench_mock_faults_total", "counter", "Faults injected by the mock, by kind.", faults);
  x.metric(
    "tokenbench_mock_rejected_total",
    "counter",
    "Requests rejected because the queue was full.",
    e.rejected,
  );
  return x.text();
}

async function handle(engine: Engine, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Arrival = request headers parsed, before the body is read (as a server's own clock sees it).
  const arrival = performance.now();
  const arrivalHr = Number(process.hrtime.bigint()) / 1e6;
  const url = (req.url ?? "/").split("?")[0]!;
  const method = req.method ?? "GET";
  const flavor = engine.flavor;
  try {
    const api = API_ROUTES[url];
    if (method === "POST" && api !== undefined) {
      const body = await readJson(req);
      return engine.completion(req, res, body, api, arrival, arrivalHr);
    }
    if (method === "GET" && url === "/mock/stats") return sendJson(res, 200, engine.stats());
    if (!flavor.commonRoutes) throw new HttpError(404, `no route ${method} ${url}`, "not_found_error");
    if (method === "GET" && url === "/v1/models") return sendJson(res, 200, models(engine.o));
    if (method === "GET" && url === "/health") {
      const h = flavor.health(engine);
      if (h.error !== undefined) return sendError(res, h.status, h.error, "unavailable_error");
      if (h.body !== null) return sendJson(res, h.status, h.body);
      res.writeHead(h.status, { "content-length": 0 });
      return void res.end();
    }
    if (method === "GET" && url === "/metrics") {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      return void res.end(metricsText(engine));
    }
    if (method === "POST") {
      const body = await readJson(req, {});
      const answer = flavor.post(url, body, (chat) => promptOf(body, chat), engine);
      if (answer !== undefined) return sendJson(res, 200, answer);
    }
    if (method === "GET") {
      const answer = flavor.get(url, engine);
      if (answer !== undefined) return sendJson(res, 200, answer);
    }
    throw new HttpError(404, `no route ${method} ${url}`, "not_found_error");
  } catch (err) {
    if (err instanceof HttpError) return sendError(res, err.status, err.message, err.type);
    throw err;
  }
}
