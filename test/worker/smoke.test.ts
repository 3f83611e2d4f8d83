import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/worker/index.ts";

describe("worker smoke", () => {
  it("answers /health and has migrated measures", async () => {
    const res = await app.request("/health", {}, env);
    expect(res.status).toBe(200);
    const r = await env.DB.prepare("SELECT COUNT(*) AS n FROM measures").first<{ n: number }>();
    expect(r!.n).toBe(17);
  });
});
