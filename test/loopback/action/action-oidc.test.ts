// The Action's OIDC path end to end: core.getIDToken(audience) against a stand-in of the runner's
// token endpoint (it signs RS256 tokens with a test key), uploaded to the local results service
// (wrangler dev) configured with that key's JWKS; no api-token anywhere.
import { createSign, generateKeyPairSync, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalService, startService } from "../../../scripts/local-service.ts";
import { runAction } from "../../../scripts/run-action.ts";
import { type MockServer, start } from "../../../src/mock/index.ts";

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

describe("the Action uploads with a GitHub OIDC token", () => {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: "jwk" }), kid: "test-key", alg: "RS256", use: "sig" };
  const requests: { url: string; auth: string | undefined }[] = [];
  let tokenServer: http.Server;
  let tokenUrl: string;
  let service: LocalService;
  let mock: MockServer;

  beforeAll(async () => {
    tokenServer = http.createServer((req, res) => {
      requests.push({ url: req.url ?? "", auth: req.headers.authorization });
      const aud = new URL(req.url ?? "/", "http://x").searchParams.get("audience");
      const now = Math.floor(Date.now() / 1000);
      const header = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid: "test-key" }));
      const payload = b64url(
        JSON.stringify({
          iss: "https://token.actions.githubusercontent.com",
          aud,
          repository: "acme/oidc-e2e",
          ref: "refs/heads/main",
          event_name: "push",
          iat: now,
          nbf: now,
          exp: now + 300,
          jti: randomUUID(),
        }),
      );
      const sig = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(privateKey);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ value: `${header}.${payload}.${b64url(sig)}` }));
    });
    await new Promise<void>((r) => tokenServer.listen(0, "127.0.0.1", () => r()));
    tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token?api-version=2.0`;
    [service, mock] = await Promise.all([
      startService({ OIDC_JWKS: JSON.stringify({ keys: [jwk] }), ALLOWED_REPOSITORIES: "acme/*" }),
      start({ ttftMs: 5, itlMs: 1 }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([service?.stop(), mock?.close(), new Promise((r) => tokenServer?.close(r))]);
  });

  it("gets a token for the configured audience and the service accepts it", { timeout: 60_000 }, async () => {
    const r = await runAction(
      {
        "base-url": mock.url,
        levels: "1",
        requests: "2",
        "max-tokens": "3",
        warmup: "0",
        "results-url": service.url,
        audience: "tokenbench",
      },
      {
        GITHUB_REPOSITORY: "acme/oidc-e2e",
        GITHUB_EVENT_NAME: "push",
        GITHUB_REF: "refs/heads/main",
        GITHUB_SHA: "e".repeat(40),
        GITHUB_RUN_ID: "1",
      },
      {},
      { env: { ACTIONS_ID_TOKEN_REQUEST_URL: tokenUrl, ACTIONS_ID_TOKEN_REQUEST_TOKEN: "runner-token" } },
    );
    expect(r.code, r.log).toBe(0);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toContain("audience=tokenbench");
    expect(requests[0]!.auth).toBe("Bearer runner-token");
    expect(r.outputs["run-url"]).toMatch(/\/runs\/[0-9a-f]{16}$/);
    const runs = (await (await fetch(`${service.url}/api/v1/repos/acme/oidc-e2e/runs`)).json()) as {
      runs: unknown[];
    };
    expect(runs.runs).toHaveLength(1);
  });
});
