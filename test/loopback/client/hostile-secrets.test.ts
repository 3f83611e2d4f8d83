// A server that echoes the request's credentials in its error bodies: the key must reach neither
// the terminal, nor the results file, nor a record's error message.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpCall } from "../../../src/core/server/http.ts";
import { redacted, secretsIn } from "../../../src/core/server/target.ts";
import { runCli } from "../../helpers/cli.ts";
import { echoingInferenceServer } from "../../helpers/echo-servers.ts";

const KEY = "sk-live-abcdef123456";
const HEADER = "hdr-secret-9876";
let server: Awaited<ReturnType<typeof echoingInferenceServer>>;

beforeAll(async () => {
  server = await echoingInferenceServer();
});
afterAll(() => server?.close());

describe("credentials echoed by the server under test are masked", () => {
  it("secretsIn: the values of credential headers, and a Bearer key alone", () => {
    expect(
      secretsIn({
        authorization: `Bearer ${KEY}`,
        "X-Api-Key": HEADER,
        accept: "text/event-stream",
        Cookie: "a",
      }),
    ).toEqual([`Bearer ${KEY}`, KEY, HEADER]);
    expect(redacted(`got Bearer ${KEY} and ${KEY}`, [KEY, `Bearer ${KEY}`])).toBe("got *** and ***");
  });

  it("httpCall: the body and its JSON are masked before anything reads them", async () => {
    const r = await httpCall(`${server.url}/v1/chat/completions`, {
      method: "POST",
      body: { stream: true },
      headers: { authorization: `Bearer ${KEY}`, "x-api-key": HEADER },
    });
    expect(r.status).toBe(500);
    expect(r.text).toBe("upstream refused authorization=*** x-api-key=***");
  });

  it("a sweep: not in the terminal, the results file or any record", { timeout: 60_000 }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), "tokenbench-secrets-")), "r.json");
    const r = await runCli([
      "sweep",
      "--base-url",
      server.url,
      "--api-key",
      KEY,
      "--header",
      `X-Api-Key: ${HEADER}`,
      "--levels",
      "1",
      "--requests",
      "3",
      "--max-tokens",
      "4",
      "--out",
      out,
    ]);
    expect(r.stderr).toMatch(/HTTP 500: upstream refused authorization=\*\*\* x-api-key=\*\*\*/);
    const file = readFileSync(out, "utf8");
    for (const text of [r.stdout, r.stderr, file]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(HEADER);
    }
    const doc = JSON.parse(file) as { requests: { error: { message: string } | null }[] };
    const errors = doc.requests.filter((q) => q.error !== null);
    expect(errors.length).toBeGreaterThan(0);
    for (const q of errors) expect(q.error!.message).toContain("authorization=***");
  });
});
