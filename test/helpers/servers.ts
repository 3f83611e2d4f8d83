import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import type { RequestSpec } from "../../src/core/client/stream-client.ts";
import { StreamClient } from "../../src/core/client/stream-client.ts";
import { tgt } from "./target.ts";

/** A real HTTP server on 127.0.0.1 with a test-supplied handler. */
export async function rawServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

export function client(
  baseUrl: string,
  over: Partial<Omit<ConstructorParameters<typeof StreamClient>[0], "target">> &
    Partial<Parameters<typeof tgt>[1]> = {},
) {
  const { api, apiKey, headers, model, ...rest } = over;
  return new StreamClient({
    target: tgt(baseUrl, {
      ...(api ? { api } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(headers ? { headers } : {}),
      ...(model !== undefined ? { model } : {}),
    }),
    timeoutS: 10,
    ignoreEos: true,
    extraBody: {},
    originMs: performance.now(),
    ...rest,
  });
}

let ids = 0;
export function spec(over: Partial<RequestSpec> = {}): RequestSpec {
  return {
    id: ids++,
    level: 1,
    warmup: false,
    prompt: "tell me a story about the sea",
    maxTokens: 8,
    promptTokensRequested: 7,
    intendedSendAbsMs: null,
    ...over,
  };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
