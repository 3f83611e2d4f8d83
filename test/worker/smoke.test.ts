import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/worker/index.ts";

describe("worker smoke", () => {
  it("answers /health and has migrated measures", async () => {
    const res = await app.request("/health", {}, env);
    expect(res.status).toBe(200);
    const r = await env.DB.prepare("SELECT COUNT(*) AS n FROM measures").first<{ n: number }>();
    // every measure of the catalogue is in D1, with its unit and direction
    const { MEASURES } = await import("../../src/shared/measures.ts");
    expect(r!.n).toBe(MEASURES.length);
    const rows = await env.DB.prepare("SELECT name, unit, direction FROM measures ORDER BY id").all<{
      name: string;
      unit: string;
      direction: string;
    }>();
    expect(rows.results).toEqual(
      MEASURES.map((m) => ({ name: m.name, unit: m.unit, direction: m.direction })),
    );
  });
});
