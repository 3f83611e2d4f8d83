/**
 * The Action against services that never answer or refuse (#11): every call has a per-attempt and
 * a total deadline and says "timed out after N s"; a service with a READ_TOKEN gets it.
 */

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchCompare, uploadResults } from "../../../src/core/documents/publish.ts";
import { parseResultDocument } from "../../../src/schema/v1.ts";

const doc = parseResultDocument(JSON.parse(readFileSync("schema/examples/closed-sweep.json", "utf8")));

/** Accepts connections and never writes a byte. */
let silent: Server;
let url: string;
beforeAll(async () => {
  silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
afterAll(() => {
  silent.close();
});

describe("a results service that never answers", () => {
  it("each upload attempt is cut at its deadline, and the message says so", async () => {
    const t0 = performance.now();
    const r = await uploadResults(url, doc, "t", {
      attempts: 3,
      baseDelayMs: 50,
      attemptTimeoutMs: 300,
      totalTimeoutMs: 10_000,
    });
    const s = (performance.now() - t0) / 1000;
    expect(r.ok).toBe(false);
    expect(r.attempts).toBe(3);
    expect(r.error).toBe("timed out after 0.3 s");
    expect(s).toBeGreaterThan(0.85);
    expect(s).toBeLessThan(5);
  });
  it("the total deadline stops the retries", async () => {
    const t0 = performance.now();
    const r = await uploadResults(url, doc, "t", {
      attempts: 10,
      baseDelayMs: 400,
      attemptTimeoutMs: 300,
      totalTimeoutMs: 1000,
    });
    expect((performance.now() - t0) / 1000).toBeLessThan(3);
    expect(r.attempts).toBeLessThan(10);
    expect(r.error).toMatch(/^timed out after 0\.3 s; gave up: the upload's total deadline of 1 s/);
  });
  it("compare is cut at its deadline too", async () => {
    const t0 = performance.now();
    const r = await fetchCompare(url, "acme/x", "0123456789abcdef", "main", null, fetch, 300);
    expect(r).toEqual({ ok: false, error: "timed out after 0.3 s" });
    expect(performance.now() - t0).toBeLessThan(3000);
  });
});

describe("a GitHub API that never answers", () => {
  it("the PR comment gives up at its deadline instead of holding the job", async () => {
    const { upsertStickyComment } = await import("../../../src/action/comment.ts");
    const t0 = performance.now();
    await expect(
      upsertStickyComment(
        { apiUrl: url, token: "t", repository: "acme/x", timeoutMs: 300 },
        7,
        "<!-- m -->",
        "body",
      ),
    ).rejects.toThrow(/abort|timeout|timed out/i);
    expect(performance.now() - t0).toBeLessThan(3000);
  });
});

describe("a results service with a READ_TOKEN", () => {
  it("compare sends the read token, and a 401 says which input to set", async () => {
    const seen: (string | null)[] = [];
    const fake = (async (_u: string, init?: RequestInit) => {
      const auth = new Headers(init?.headers).get("authorization");
      seen.push(auth);
      return auth === "Bearer rt"
        ? new Response(JSON.stringify({ rows: [], baseline_runs: [], base_branch: "main" }), { status: 200 })
        : new Response('{"error":{"code":"read_token_required"}}', { status: 401 });
    }) as typeof fetch;
    const denied = await fetchCompare("http://x", "acme/x", "0123456789abcdef", "main", null, fake);
    expect(denied.ok).toBe(false);
    expect(denied.ok ? "" : denied.error).toMatch(/read-token input/);
    const ok = await fetchCompare("http://x", "acme/x", "0123456789abcdef", "main", "rt", fake);
    expect(ok.ok).toBe(true);
    expect(seen).toEqual([null, "Bearer rt"]);
  });
});

describe("change points in the job summary of a push to the default branch", () => {
  it("names the run that started a recent segment, and stays quiet about old ones", async () => {
    const { recentChangePoints } = await import("../../../src/core/documents/publish.ts");
    const answer = (index: number) =>
      (async () =>
        new Response(
          JSON.stringify({
            points: 20,
            change_points: [
              {
                index,
                run_id: "00000000000000aa",
                commit_sha: "abcdef0123",
                delta_pct: -10.2,
                p_value: 0.0031,
                before_mean: 1,
                after_mean: 0.9,
                created_at: "x",
              },
            ],
          }),
        )) as unknown as typeof fetch;
    const series = [{ benchmark: "closed c=8", measure: "output_tok_s", label: "output tok/s" }];
    expect(await recentChangePoints("http://x", "acme/x", "main", series, null, answer(16))).toEqual([
      "- **output tok/s** at closed c=8: a new segment started 3 run(s) ago at run 00000000000000aa (commit `abcdef0`): -10.2 % (p 0.0031)",
    ]);
    expect(await recentChangePoints("http://x", "acme/x", "main", series, null, answer(2))).toEqual([]);
  });
});

describe("GitHub's API out of reach", () => {
  it("a refused connection names the call, the host and the cause, not only undici's 'fetch failed'", async () => {
    const { github } = await import("../../../src/action/github.ts");
    // a port nothing listens on: the silent server's, closed
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(
      github(
        { apiUrl: `http://127.0.0.1:${port}`, token: "t", repository: "a/b" },
        "POST",
        "/repos/a/b/issues/1/comments",
        {
          body: "x",
        },
      ),
    ).rejects.toThrow(
      new RegExp(
        `^GitHub's API \\(POST /repos/a/b/issues/1/comments\\) at 127\\.0\\.0\\.1:${port}: network error: fetch failed \\(ECONNREFUSED`,
      ),
    );
  });
});
