/**
 * The JIT warm-up (#10): 80,000 chunks through the real client path from a loopback server in
 * this process, for every API kind (the target is never contacted: here it is a closed port).
 */
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { WARMUP_CHUNKS, warmUpClientPath } from "../../../src/core/client/jit-warmup.ts";
import { makeTarget } from "../../../src/core/server/target.ts";

const cfg = (api: "chat" | "completions" | "responses" | "messages") => ({
  target: makeTarget({ baseUrl: "http://127.0.0.1:9", api, model: "m", apiKey: null, headers: {} }),
  timeoutS: 30,
  ignoreEos: true,
  extraBody: {},
  originMs: performance.now(),
});

describe("JIT warm-up of the client path", () => {
  it.each(["chat", "completions", "responses", "messages"] as const)(
    "streams %s chunks through a StreamClient",
    async (api) => {
      const r = await warmUpClientPath(cfg(api));
      expect(r).not.toBeNull();
      // every chunk read as a content event, plus the usage event
      expect(r!.chunks).toBeGreaterThanOrEqual(WARMUP_CHUNKS);
      expect(r!.chunks).toBeLessThanOrEqual(WARMUP_CHUNKS + 8);
      expect(r!.ms).toBeLessThan(20_000);
    },
  );
});
