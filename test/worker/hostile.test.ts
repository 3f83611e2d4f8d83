/**
 * The hostile corpus for the results service (#11): documents that lie about time or values,
 * names that try to escape, bodies that never end or nest without end, tokens that try to write
 * another branch's history. Each case asserts the exact status and code, and that nothing (or
 * exactly the right thing) was written.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { changePoints } from "../../src/shared/change-points.ts";
import { mean, stddev } from "../../src/shared/statistics.ts";
import { sparklineSvg } from "../../src/worker/badge.ts";
import {
  ADMIN,
  apiToken,
  call,
  claims,
  count,
  type Issuer,
  json,
  makeIssuer,
  profileDoc,
  sweepDoc,
  type TestEnv,
  upload,
} from "./helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: hostile documents are arbitrary JSON
type Doc = any;

let token: string;
beforeAll(async () => {
  token = await apiToken("acme/hostile");
});

async function refused(doc: unknown, status: number, code: string, path?: string) {
  const before = [await count("runs"), await count("points")];
  const res = await upload(doc, token);
  const body = await json(res);
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  if (path !== undefined) {
    expect(body.error.message).toContain(path);
    expect(body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  }
  expect([await count("runs"), await count("points")]).toEqual(before);
}

const doc = (edit: (d: Doc) => void): Doc => {
  const d: Doc = sweepDoc("acme/hostile");
  edit(d);
  return d;
};

describe("documents that mean the impossible are refused with 422 naming the field", () => {
  it("created_at that is not a date", () =>
    refused(
      doc((d) => (d.created_at = "not-a-date")),
      422,
      "schema_invalid",
      "created_at",
    ));
  it("created_at in year 9999", () =>
    refused(
      doc((d) => (d.created_at = "9999-12-31T00:00:00.000Z")),
      422,
      "created_at_future",
      "created_at",
    ));
  it("a negative latency", () =>
    refused(
      doc((d) => (d.levels[0].ttft_ms.p50 = -5)),
      422,
      "schema_invalid",
      "levels.0.ttft_ms.p50",
    ));
  it("a negative throughput", () =>
    refused(
      doc((d) => (d.levels[0].output_tok_s = -1)),
      422,
      "schema_invalid",
      "levels.0.output_tok_s",
    ));
  it("a negative level", () =>
    refused(
      doc((d) => (d.levels[0].level = -4)),
      422,
      "schema_invalid",
      "levels.0.level",
    ));
  it("no levels at all", () =>
    refused(
      doc((d) => (d.levels = [])),
      422,
      "no_levels",
      "levels",
    ));
  it("ok + errors != requests", () =>
    refused(
      doc((d) => (d.levels[0].ok += 3)),
      422,
      "schema_invalid",
      "levels.0.requests",
    ));
  it("errors_by_code that does not add up to errors", () =>
    refused(
      doc((d) => (d.levels[0].errors_by_code = { timeout: 2 })),
      422,
      "schema_invalid",
      "levels.0.errors_by_code",
    ));
  it("the same level twice (was a 500 on the UNIQUE constraint)", () =>
    refused(
      doc((d) => d.levels.push(structuredClone(d.levels[0]))),
      422,
      "schema_invalid",
      `levels.${sweepDoc("acme/hostile").levels.length}.level`,
    ));
  it("a repository name that tries to escape", () =>
    refused(
      doc((d) => (d.repository = "../..")),
      422,
      "repository_invalid",
      "repository",
    ));
  it("extra_body nested 10,000 deep (was a 500: stack overflow)", async () => {
    const d = doc(() => {});
    const text = JSON.stringify(d).replace(
      '"extra_body":{}',
      `"extra_body":{"x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
    );
    expect(text.length).toBeGreaterThan(20_000);
    await refused(text, 422, "too_deep");
  });
});

describe("history is ordered by the service's receive time", () => {
  it("a document dated in the past, received last, lists first; its own time is kept as data", async () => {
    const t = await apiToken("acme/clock");
    const early = sweepDoc("acme/clock", { createdAt: new Date(Date.now() + 5 * 60_000).toISOString() });
    const late = sweepDoc("acme/clock", { createdAt: "2020-01-01T00:00:00.000Z" });
    expect((await upload(early, t)).status).toBe(201);
    expect((await upload(late, t)).status).toBe(201);
    const list = await json(call("/api/v1/repos/acme/clock/runs"));
    expect(list.runs.map((r: { measured_at: string }) => r.measured_at)).toEqual([
      "2020-01-01T00:00:00.000Z",
      early.created_at,
    ]);
    for (const r of list.runs) expect(Date.parse(r.created_at)).toBeLessThanOrEqual(Date.now());
  });
});

describe("repository names follow GitHub's rules and compare case-insensitively", () => {
  it("ACME/Case and acme/case are one repository", async () => {
    const t = await apiToken("acme/case");
    const res = await upload(sweepDoc("ACME/Case"), t);
    expect(res.status).toBe(201);
    expect((await json(res)).run.repository).toBe("acme/case");
    const a = await json(call("/api/v1/repos/acme/case/runs"));
    const b = await json(call("/api/v1/repos/Acme/CASE/runs"));
    expect(a.runs.length).toBe(1);
    expect(b.runs).toEqual(a.runs);
  });
  it("an admin token for a name GitHub would refuse is refused", async () => {
    for (const repository of ["../..", "-acme/x", "acme/..", "a".repeat(40) + "/x", "acme/x/y"]) {
      const res = await call("/api/v1/admin/tokens", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: JSON.stringify({ repository }),
      });
      expect([repository, res.status, (await json(res)).error.code]).toEqual([
        repository,
        422,
        "invalid_repository",
      ]);
    }
  });
});

describe("hostile bodies", () => {
  const adminPost = (body: string) =>
    call("/api/v1/admin/tokens", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body,
    });
  it("an admin body of null, an array or a number is a 422, not a 500", async () => {
    for (const body of ["null", "[]", "7", '"acme/x"']) {
      const res = await adminPost(body);
      expect([body, res.status, (await json(res)).error.code]).toEqual([body, 422, "invalid_body"]);
    }
  });

  /** A chunked body (no Content-Length) that never ends; counts how much of it was pulled. */
  const endless = () => {
    const pulled = { bytes: 0 };
    const chunk = new TextEncoder().encode(`{"pad":"${"x".repeat(64 * 1024)}`);
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        pulled.bytes += chunk.byteLength;
        ctl.enqueue(chunk);
      },
    });
    return { body, pulled };
  };

  it("a never-ending body with a fake token: 401 before any of it is read", async () => {
    const { body, pulled } = endless();
    const t0 = Date.now();
    const res = await call("/api/v1/runs", {
      method: "POST",
      headers: { authorization: "Bearer not-a-real-token", "content-type": "application/json" },
      body,
      // @ts-expect-error: Node/undici needs duplex for a stream body
      duplex: "half",
    });
    expect(res.status).toBe(401);
    expect((await json(res)).error.code).toBe("token_invalid");
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(pulled.bytes).toBeLessThanOrEqual(2 * 64 * 1024); // at most what the stream buffered ahead
  });

  it("a never-ending body with a valid token: 413 as soon as the limit is passed", async () => {
    const { body, pulled } = endless();
    const limit = 1024 * 1024;
    const e: TestEnv = { ...env, MAX_UPLOAD_BYTES: String(limit) };
    const res = await call(
      "/api/v1/runs",
      {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body,
        // @ts-expect-error: Node/undici needs duplex for a stream body
        duplex: "half",
      },
      e,
    );
    expect(res.status).toBe(413);
    expect((await json(res)).error.code).toBe("payload_too_large");
    expect(pulled.bytes).toBeLessThan(limit + 4 * 64 * 1024);
  });
});

describe("badges are valid XML whatever the label", () => {
  it("control characters in the label are removed, markup escaped", async () => {
    const t = await apiToken("acme/badge-xml");
    expect((await upload(sweepDoc("acme/badge-xml"), t)).status).toBe(201);
    const label = encodeURIComponent('a\u0001b\u001bc<&>"');
    const res = await call(`/badge/acme/badge-xml.svg?label=${label}`);
    expect(res.status).toBe(200);
    const svg = await res.text();
    expect(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(svg)).toBe(false);
    expect(svg).toContain("abc&lt;&amp;&gt;&quot;");
  });

  it("bidirectional controls and invisible characters are written out, in the text and the title", async () => {
    const label = encodeURIComponent("tok/s \u202Eevil\u2066x\u200B");
    for (const path of [
      `/badge/acme/badge-xml.svg?label=${label}`,
      `/badge/acme/badge-xml.json?label=${label}`,
    ]) {
      const body = await (await call(path)).text();
      expect(body, path).not.toMatch(/[\p{Cf}]/u);
      if (path.endsWith(".svg")) {
        expect(body).toContain("tok/s [U+202E]evil[U+2066]x[U+200B]</text>");
        expect(body).toContain('aria-label="tok/s [U+202E]evil');
      }
    }
  });
});

describe("OIDC identity: secure by default, a branch writes only its own history", () => {
  let issuer: Issuer;
  beforeAll(async () => {
    issuer = await makeIssuer("k1");
  });
  const oidcUpload = async (e: TestEnv, repo: string, branch: string, over: Record<string, unknown>) => {
    const res = await upload(sweepDoc(repo, { branch }), await issuer.sign(claims(repo, over)), e);
    return { status: res.status, code: res.ok ? null : (await json(res)).error.code };
  };

  it("no allowlist configured: OIDC uploads are refused, and the error says how to opt in", async () => {
    const e: TestEnv = { ...env, OIDC_JWKS: issuer.jwks, ALLOWED_REPOSITORIES: "" };
    const before = await count("runs");
    const res = await upload(sweepDoc("acme/open"), await issuer.sign(claims("acme/open")), e);
    const body = await json(res);
    expect([res.status, body.error.code]).toEqual([403, "allowlist_unset"]);
    expect(body.error.message).toContain("ALLOWED_REPOSITORIES");
    expect(await count("runs")).toBe(before);
  });
  it("an explicit * opts in", async () => {
    const e: TestEnv = { ...env, OIDC_JWKS: issuer.jwks, ALLOWED_REPOSITORIES: "*" };
    expect(await oidcUpload(e, "anyone/anything", "main", {})).toEqual({ status: 201, code: null });
  });

  const e = () => ({ ...env, OIDC_JWKS: issuer.jwks }) as TestEnv;
  it("a push run on a branch cannot write another branch", async () => {
    expect(await oidcUpload(e(), "acme/ident", "main", { ref: "refs/heads/feature" })).toEqual({
      status: 403,
      code: "branch_not_allowed",
    });
    expect(await oidcUpload(e(), "acme/ident", "feature", { ref: "refs/heads/feature" })).toEqual({
      status: 201,
      code: null,
    });
  });
  it("a pull-request run writes its head branch, never its base", async () => {
    const pr = { event_name: "pull_request", ref: "refs/pull/7/merge", head_ref: "topic", base_ref: "main" };
    expect(await oidcUpload(e(), "acme/ident", "main", pr)).toEqual({
      status: 403,
      code: "branch_not_allowed",
    });
    expect(await oidcUpload(e(), "acme/ident", "other", pr)).toEqual({
      status: 403,
      code: "branch_not_allowed",
    });
    expect(await oidcUpload(e(), "acme/ident", "topic", pr)).toEqual({ status: 201, code: null });
    // A fork's "main" opening a PR against "main": refused, it would land in main's history.
    const forkMain = { ...pr, head_ref: "main" };
    expect(await oidcUpload(e(), "acme/ident", "main", forkMain)).toEqual({
      status: 403,
      code: "branch_not_allowed",
    });
  });
  it("a workflow_run run (the default branch's trusted workflow) may publish any branch", async () => {
    expect(
      await oidcUpload(e(), "acme/ident", "topic2", { event_name: "workflow_run", ref: "refs/heads/main" }),
    ).toEqual({ status: 201, code: null });
  });
  it("used token ids are pruned once their token has expired", async () => {
    const old = Math.floor(Date.now() / 1000) - 24 * 3600;
    await env.DB.prepare("INSERT INTO oidc_jti (jti, expires_at) VALUES (?, ?)").bind("stale-jti", old).run();
    expect(await oidcUpload(e(), "acme/ident", "main", {})).toEqual({ status: 201, code: null });
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM oidc_jti WHERE jti = 'stale-jti'").first<{
      n: number;
    }>();
    expect(left!.n).toBe(0);
  });
});

describe("history that cannot be doubled: one CI attempt is one run", () => {
  /** Another document of the same attempt: a lower throughput, same workflow run id and attempt. */
  const sameAttempt = (d: Doc, scale: number): Doc => {
    const o = structuredClone(d);
    for (const l of o.levels) l.output_tok_s *= scale;
    return o;
  };

  it("the same body again is the stored run; another body for that attempt is 409 run_conflict", async () => {
    const first = sweepDoc("acme/hostile");
    const a = await upload(first, token);
    expect(a.status).toBe(201);
    const stored = (await json(a)).run.id;
    const before = [await count("runs"), await count("points")];
    const again = await upload(first, token);
    expect(again.status).toBe(200);
    expect((await json(again)).run.id).toBe(stored);
    expect([await count("runs"), await count("points")]).toEqual(before);
    for (const scale of [0.99, 0.5, 0.75]) {
      const res = await upload(sameAttempt(first, scale), token);
      const body = await json(res);
      expect({ status: res.status, code: body.error?.code }).toEqual({ status: 409, code: "run_conflict" });
      expect(body.error.message).toMatch(/one CI attempt is one run/);
      expect(body.error.details.run_id).toBe(stored);
      expect([await count("runs"), await count("points")]).toEqual(before);
    }
  });

  it("a new attempt, another kind, another testbed or another shard of one workflow run are runs of their own", async () => {
    const first = sweepDoc("acme/hostile");
    expect((await upload(first, token)).status).toBe(201);
    const retry = sameAttempt(first, 0.9);
    retry.git.run_attempt = 2;
    expect((await upload(retry, token)).status).toBe(201);
    const otherTestbed = sameAttempt(first, 0.8);
    otherTestbed.environment.gpu = { name: "NVIDIA L4", count: 1, memory_mib: 23034, driver: "550" };
    const t = await upload(otherTestbed, token);
    expect(t.status, JSON.stringify(await json(t.clone()))).toBe(201);
    const shard = sameAttempt(first, 0.7);
    shard.load_generator = { workers: 1, shard: "2/2", start_at_epoch_ms: 1 };
    const r = await upload(shard, token);
    expect(r.status, JSON.stringify(await json(r.clone()))).toBe(201);
    const profile: Doc = profileDoc("acme/hostile");
    profile.git = { ...first.git };
    expect((await upload(profile, token)).status).toBe(201);
  });

  it("outside CI (no workflow run id) there is no attempt to count twice", async () => {
    const local = sweepDoc("acme/hostile");
    local.git!.workflow_run_id = null;
    local.git!.run_attempt = null;
    expect((await upload(local, token)).status).toBe(201);
    expect((await upload(sameAttempt(local, 0.6), token)).status).toBe(201);
  });
});

describe("figures that cannot be impossible", () => {
  const impossible = (f: (d: Doc) => void, path: string) => refused(doc(f), 422, "figure_impossible", path);
  it("output tok/s of 1e308 (more than the completion tokens over the wall time)", () =>
    impossible((d) => (d.levels[0].output_tok_s = 1e308), "levels[0].output_tok_s"));
  it("total tok/s above all tokens over the wall time", () =>
    impossible((d) => (d.levels[1].total_tok_s *= 3), "levels[1].total_tok_s"));
  it("req/s above the successful requests over the wall time", () =>
    impossible((d) => (d.levels[0].req_s *= 2), "levels[0].req_s"));
  it("goodput above req/s", () =>
    impossible((d) => (d.levels[0].goodput_req_s = d.levels[0].req_s * 2), "levels[0].goodput_req_s"));
  it("a TTFT p99 longer than the level's wall time", () =>
    impossible(
      (d) => (d.levels[0].ttft_ms.p99 = d.levels[0].wall_time_s * 1000 * 2),
      "levels[0].ttft_ms.p99",
    ));
  it("an E2E max of 1e300 ms", () =>
    impossible((d) => (d.levels[1].e2e_ms.max = 1e300), "levels[1].e2e_ms.max"));
  it("a value past what JSON numbers hold (1e400 reads as Infinity) is not schema v1", async () => {
    const text = JSON.stringify(sweepDoc("acme/hostile")).replace(
      /"output_tok_s":[0-9.e+]+/,
      '"output_tok_s":1e400',
    );
    const before = await count("runs");
    const res = await call("/api/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: text,
    });
    expect(res.status).toBe(422);
    expect((await json(res)).error.code).toBe("schema_invalid");
    expect(await count("runs")).toBe(before);
  });
  it("counts raised to match 3.3e16 tok/s: beyond any server, whatever the counts", () =>
    impossible((d) => {
      const l = d.levels[0];
      l.completion_tokens_total = Math.ceil(3.3e16 * l.wall_time_s);
      l.output_tok_s = 3.3e16;
    }, "levels[0].output_tok_s"));
  it("more completion tokens than the requests' max_tokens allowed", () =>
    impossible((d) => {
      const l = d.levels[1];
      l.completion_tokens_total = l.ok * d.config!.max_tokens * 3;
    }, "levels[1].completion_tokens_total"));
  it("one stream decoding at a million tokens a second", () =>
    impossible((d) => (d.levels[0].decode_tok_s.max = 1e6), "levels[0].decode_tok_s.max"));
  const gpu = (edit: (g: Record<string, unknown>) => void) => (d: Doc) => {
    const g: Record<string, unknown> = {
      source: "nvidia-smi",
      energy_method: "counter",
      window: "steady",
      window_s: 1,
      energy_j: 300,
      mean_power_w: 300,
      peak_power_w: 310,
      idle_power_w: 60,
      output_tok_per_j: 1,
      j_per_output_tok: 1,
      j_per_request: 1,
      w_per_user: 300,
      usd_per_m_output_tok: 1,
      usd_per_m_total_tok: 1,
      per_gpu: [],
      unknown_reason: null,
    };
    edit(g);
    (d.levels[0] as Record<string, unknown>).gpu = g;
  };
  it("negative power, energy or cost", async () => {
    await impossible(
      gpu((g) => (g.mean_power_w = -300)),
      "levels[0].gpu.mean_power_w",
    );
    await impossible(
      gpu((g) => (g.energy_j = -1)),
      "levels[0].gpu.energy_j",
    );
    await impossible(
      gpu((g) => (g.usd_per_m_output_tok = -2)),
      "levels[0].gpu.usd_per_m_output_tok",
    );
  });
  it("328 million W from one GPU", () =>
    impossible(
      gpu((g) => (g.mean_power_w = 328e6)),
      "levels[0].gpu.mean_power_w",
    ));
  it("samples that contradict the level's own figure (a TTFT p50 its samples put elsewhere)", async () => {
    const d = sweepDoc("acme/hostile");
    const l = d.levels[0]!;
    d.samples = [
      {
        level: l.level,
        measure: "ttft_p50_ms",
        values: Array.from({ length: 100 }, (_, i) => 2 * l.ttft_ms.p50! + i),
      },
    ];
    const res = await upload(d, token);
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.error.code).toBe("samples_invalid");
    expect(body.error.message).toMatch(
      /contradict the level's own figure .*0 % of them are below it, where a p50 has 50 %/,
    );
  });
  it("a real document passes every bound", async () => {
    expect((await upload(sweepDoc("acme/hostile"), token)).status).toBe(201);
  });
  const steady = (d: Doc, windowS: number) => {
    const l = d.levels[0];
    l.steady_state = {
      steady: true,
      window_start_ms: 0,
      window_end_ms: windowS * 1000,
      window_s: windowS,
      min_steady_s: 1,
      requests_inside: 1,
      before_window: 0,
      after_window: 0,
      completed_rps: null,
      reason: "steady",
    };
  };
  it("a steady level's rates are bounded by its counts over its window, not over its wall time", async () => {
    // the window's rate may pass count / wall (the ramp and drain are slower), never count / window
    const fast = sweepDoc("acme/hostile");
    const l = fast.levels[0]!;
    steady(fast, l.wall_time_s / 2);
    l.output_tok_s = (1.5 * l.completion_tokens_total) / l.wall_time_s;
    expect((await upload(fast, token)).status).toBe(201);
    await impossible((d) => {
      steady(d, d.levels[0].wall_time_s / 2);
      d.levels[0].output_tok_s = (3 * d.levels[0].completion_tokens_total) / d.levels[0].wall_time_s;
    }, "levels[0].output_tok_s");
  });
});

describe("the read side's statistics: no finite input overflows", () => {
  it("means, deviations and change points of values near 1e308 are finite and found", () => {
    const big = [1, 1.01, 0.99, 1, 1.02, 1.7, 1.71, 1.69, 1.7, 1.72].map((x) => x * 1e308);
    expect(mean([1e308, 1e308])).toBe(1e308);
    expect(Number.isFinite(stddev(big))).toBe(true);
    const cps = changePoints(big);
    expect(cps.map((c) => c.index)).toEqual([5]);
    expect(Number.isFinite(cps[0]!.before_mean) && Number.isFinite(cps[0]!.after_mean)).toBe(true);
    expect(cps[0]!.delta_pct).toBeCloseTo(70, 0);
  });
  it("a sparkline of values near 1e308 draws numbers, not NaN", () => {
    const svg = sparklineSvg([1e308, 1.5e308, 1.7e308, -1.7e308]);
    expect(svg).not.toMatch(/NaN|Infinity/);
    expect(svg).toMatch(/points="[0-9., -]+"/);
  });
});
