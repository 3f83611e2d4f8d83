import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import {
  apiToken,
  call,
  claims,
  count,
  type Issuer,
  json,
  makeIssuer,
  profileDoc,
  sweepDoc,
  upload,
  utf8b64url,
} from "./helpers.ts";

describe("ingest with repository API tokens", () => {
  let token: string;
  beforeAll(async () => {
    token = await apiToken("acme/llm");
  });

  it("stores a run, its testbed, benchmarks and points; per-request records stripped", async () => {
    const doc = sweepDoc("acme/llm");
    const res = await upload({ ...doc, requests: [] }, token);
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body.created).toBe(true);
    expect(body.points).toBeGreaterThan(20);
    expect(body.run.testbed.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    const run = await json(call(`/api/v1/runs/${body.run.id}`));
    expect(run.document.requests).toBeNull();
    expect(run.document.levels).toHaveLength(2);
    expect(
      run.points.find(
        (p: { benchmark: string; measure: string }) =>
          p.benchmark === "closed c=4" && p.measure === "output_tok_s",
      ),
    ).toBeTruthy();
  });

  it("samples sent in place of the records are kept beside the run, not in its document", async () => {
    const doc = sweepDoc("acme/llm");
    const level = doc.levels[0]!.level;
    const values = [10.5, 11.25, 12, 13.5, 9.75, 10];
    const res = await upload({ ...doc, samples: [{ level, measure: "ttft_p50_ms", values }] }, token);
    expect(res.status).toBe(201);
    const body = await json(res);
    const run = await json(call(`/api/v1/runs/${body.run.id}`));
    expect(run.document.samples).toBeUndefined();
    const row = await env.DB.prepare(
      "SELECT s.values_json FROM run_samples s JOIN runs r ON r.id = s.run_id WHERE r.public_id = ? AND s.measure = 'ttft_p50_ms'",
    )
      .bind(body.run.id)
      .first<{ values_json: string }>();
    expect(JSON.parse(row!.values_json)).toEqual(values);
  });

  it("re-sending the same run returns the stored run and writes nothing new", async () => {
    const doc = sweepDoc("acme/llm");
    const first = await json(upload(doc, token));
    const [runs, points] = [await count("runs"), await count("points")];
    const again = await upload(doc, token);
    expect(again.status).toBe(200);
    const body = await json(again);
    expect(body.created).toBe(false);
    expect(body.run.id).toBe(first.run.id);
    expect(await count("runs")).toBe(runs);
    expect(await count("points")).toBe(points);
  });

  it("profile documents become profile benchmarks", async () => {
    const res = await json(upload(profileDoc("acme/llm"), token));
    const run = await json(call(`/api/v1/runs/${res.run.id}`));
    const names = new Set(run.points.map((p: { benchmark: string }) => p.benchmark));
    expect(names).toContain("profile decode");
    expect(names).toContain("profile prefill 512");
    expect(names).toContain("profile prefix identical");
  });

  it("SQL-looking strings are stored verbatim", async () => {
    const evil = "main'; DROP TABLE runs; --";
    const doc = sweepDoc("acme/llm", { branch: evil });
    doc.testbed = {
      name: "x'); DELETE FROM points; --",
      gpu: null,
      gpu_count: null,
      engine: null,
      engine_version: null,
      engine_flags: null,
      model: null,
    };
    const res = await json(upload(doc, token));
    expect(res.run.branch).toBe(evil);
    expect(res.run.testbed.name).toBe("x'); DELETE FROM points; --");
    const listed = await json(call(`/api/v1/repos/acme/llm/runs?branch=${encodeURIComponent(evil)}`));
    expect(listed.runs).toHaveLength(1);
    expect(await count("points")).toBeGreaterThan(0);
  });

  it("100 concurrent ingests of distinct runs are all stored", async () => {
    const before = await count("runs");
    const docs = Array.from({ length: 100 }, () => sweepDoc("acme/burst"));
    const t = await apiToken("acme/burst");
    const res = await Promise.all(docs.map((d) => upload(d, t)));
    expect(res.map((r) => r.status)).toEqual(Array(100).fill(201));
    expect(await count("runs")).toBe(before + 100);
  });

  it("a failing statement inside an ingest leaves nothing partial", async () => {
    await env.DB.prepare(
      "CREATE TRIGGER fail_points BEFORE INSERT ON points WHEN NEW.value = 4.24242 BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
    ).run();
    try {
      const doc = sweepDoc("acme/atomic", { branch: "feature-x" });
      doc.levels[1]!.output_tok_s = 4.24242; // the second points statement fails (a marker value, within the level's bounds)
      doc.testbed = {
        name: "atomic-testbed",
        gpu: null,
        gpu_count: null,
        engine: null,
        engine_version: null,
        engine_flags: null,
        model: null,
      };
      const t = await apiToken("acme/atomic");
      const before = {
        runs: await count("runs"),
        points: await count("points"),
        testbeds: await count("testbeds"),
        benchmarks: await count("benchmarks"),
        branches: await count("branches"),
      };
      const res = await upload(doc, t);
      expect(res.status).toBe(500);
      expect((await json(res)).error.code).toBe("internal");
      expect({
        runs: await count("runs"),
        points: await count("points"),
        testbeds: await count("testbeds"),
        benchmarks: await count("benchmarks"),
        branches: await count("branches"),
      }).toEqual(before);
    } finally {
      await env.DB.prepare("DROP TRIGGER fail_points").run();
    }
  });
});

describe("invalid uploads: 4xx with a stable code, nothing written", () => {
  let token: string;
  beforeAll(async () => {
    token = await apiToken("acme/bad");
  });
  const nothingWritten = async (f: () => Promise<Response>, status: number, code: string) => {
    const before = [await count("runs"), await count("points")];
    const res = await f();
    expect(res.status).toBe(status);
    const body = await json(res);
    expect(body.error.code).toBe(code);
    expect(typeof body.error.message).toBe("string");
    expect([await count("runs"), await count("points")]).toEqual(before);
  };

  it("malformed JSON", () => nothingWritten(() => upload("{nope", token), 400, "invalid_json"));
  it("schema-invalid", async () => {
    const doc = sweepDoc("acme/bad") as unknown as Record<string, unknown>;
    delete doc.target;
    await nothingWritten(() => upload(doc, token), 422, "schema_invalid");
    const res = await json(upload(doc, token));
    expect(res.error.details[0].path).toBe("target");
  });
  it("samples of a measure that is not sampled, or of a level the document lacks", async () => {
    const doc = sweepDoc("acme/bad");
    await nothingWritten(
      () =>
        upload(
          { ...doc, samples: [{ level: doc.levels[0]!.level, measure: "output_tok_s", values: [1] }] },
          token,
        ),
      422,
      "samples_invalid",
    );
    await nothingWritten(
      () => upload({ ...doc, samples: [{ level: 12345, measure: "ttft_p50_ms", values: [1] }] }, token),
      422,
      "samples_invalid",
    );
  });
  it("no repository", () =>
    nothingWritten(
      () => upload({ ...sweepDoc("acme/bad"), repository: null }, token),
      422,
      "repository_missing",
    ));
  it("oversize", async () => {
    const e = { ...env, MAX_UPLOAD_BYTES: "1000" };
    await nothingWritten(() => upload(sweepDoc("acme/bad"), token, e), 413, "payload_too_large");
  });
  it("no token, unknown token, revoked token, token for another repository", async () => {
    await nothingWritten(() => call("/api/v1/runs", { method: "POST", body: "{}" }), 401, "unauthenticated");
    await nothingWritten(() => upload(sweepDoc("acme/bad"), "tb_not-a-real-token"), 401, "token_invalid");
    await nothingWritten(() => upload(sweepDoc("acme/other"), token), 403, "repository_mismatch");
    const created = await json(
      call("/api/v1/admin/tokens", {
        method: "POST",
        headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" },
        body: JSON.stringify({ repository: "acme/bad" }),
      }),
    );
    const del = await call(`/api/v1/admin/tokens/${created.id}`, {
      method: "DELETE",
      headers: { authorization: "Bearer test-admin-token" },
    });
    expect(del.status).toBe(200);
    await nothingWritten(() => upload(sweepDoc("acme/bad"), created.token), 401, "token_invalid");
  });
  it("repository outside the allowlist", async () => {
    const t = await apiToken("evil/repo");
    await nothingWritten(() => upload(sweepDoc("evil/repo"), t), 403, "repository_not_allowed");
  });
});

describe("admin endpoints", () => {
  it("need the admin token; tokens are stored only as hashes", async () => {
    const denied = await call("/api/v1/admin/tokens", {
      method: "POST",
      headers: { authorization: "Bearer wrong" },
      body: "{}",
    });
    expect(denied.status).toBe(401);
    expect((await json(denied)).error.code).toBe("admin_unauthorized");
    const t = await apiToken("acme/hash");
    const rows = await env.DB.prepare("SELECT token_hash FROM api_tokens").all<{ token_hash: string }>();
    expect(rows.results.every((r) => r.token_hash !== t && /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
    const bad = await call("/api/v1/admin/tokens", {
      method: "POST",
      headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" },
      body: JSON.stringify({ repository: "no-slash" }),
    });
    expect(bad.status).toBe(422);
  });
});

describe("ingest with GitHub Actions OIDC tokens", () => {
  let issuer: Issuer;
  let other: Issuer;
  let e: typeof env & { OIDC_JWKS: string };
  beforeAll(async () => {
    issuer = await makeIssuer("k1");
    other = await makeIssuer("k1"); // same kid, different key
    e = { ...env, OIDC_JWKS: issuer.jwks };
  });

  it("a valid token for the document's repository is accepted", async () => {
    const res = await upload(sweepDoc("acme/oidc"), await issuer.sign(claims("acme/oidc")), e);
    expect(res.status).toBe(201);
  });

  const rejected = async (token: string, status: number, code: string, repo = "acme/oidc") => {
    const before = await count("runs");
    const res = await upload(sweepDoc(repo), token, e);
    const body = await json(res);
    expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
    expect(await count("runs")).toBe(before);
  };

  it("forged (payload changed after signing)", async () => {
    const t = await issuer.sign(claims("acme/other"));
    const [h, , s] = t.split(".");
    await rejected(`${h}.${utf8b64url(claims("acme/oidc"))}.${s}`, 401, "token_signature");
  });
  it("signed with the wrong key", async () =>
    rejected(await other.sign(claims("acme/oidc")), 401, "token_signature"));
  it("unknown key id", async () =>
    rejected(await issuer.sign(claims("acme/oidc"), { kid: "nope" }), 401, "token_key_unknown"));
  it("unsigned (alg: none)", async () => {
    const t = `${utf8b64url({ alg: "none", typ: "JWT" })}.${utf8b64url(claims("acme/oidc"))}.`;
    await rejected(t, 401, "token_alg");
  });
  it("HS256 (algorithm confusion)", async () =>
    rejected(await issuer.sign(claims("acme/oidc"), { alg: "HS256" }), 401, "token_alg"));
  it("expired", async () => {
    const now = Math.floor(Date.now() / 1000);
    await rejected(
      await issuer.sign(claims("acme/oidc", { exp: now - 3600, iat: now - 7200, nbf: now - 7200 })),
      401,
      "token_expired",
    );
  });
  it("not yet valid", async () => {
    const now = Math.floor(Date.now() / 1000);
    await rejected(
      await issuer.sign(claims("acme/oidc", { nbf: now + 3600, iat: now })),
      401,
      "token_not_yet_valid",
    );
  });
  it("wrong audience", async () =>
    rejected(await issuer.sign(claims("acme/oidc", { aud: "someone-else" })), 401, "token_audience"));
  it("wrong issuer", async () =>
    rejected(await issuer.sign(claims("acme/oidc", { iss: "https://evil.example" })), 401, "token_issuer"));
  it("token for another repository", async () =>
    rejected(await issuer.sign(claims("acme/other-repo")), 403, "repository_mismatch"));
  it("repository outside the allowlist", async () =>
    rejected(await issuer.sign(claims("evil/repo")), 403, "repository_not_allowed", "evil/repo"));
  it("replayed jti", async () => {
    const c = claims("acme/oidc");
    const t1 = await issuer.sign(c);
    expect((await upload(sweepDoc("acme/oidc"), t1, e)).status).toBe(201);
    await rejected(t1, 401, "token_replayed");
  });
});
