/**
 * tokenbench results service: Hono on Cloudflare Workers with D1. Stores schema-v1 results and
 * serves the query API, trend series, compare (baseline + deltas), badges and the dashboard.
 */
import { Hono } from "hono";
import { cors } from "hono/cors";
import { type ResultDocument, ResultDocument as ResultDocumentSchema } from "../schema/v1.ts";
import { compareRows } from "../shared/compare.ts";
import { headline, MEASURE_BY_NAME } from "../shared/measures.ts";
import { DEFAULT_THRESHOLDS, judge, type Thresholds } from "../shared/statistics.ts";
import {
  bearer,
  hashToken,
  looksLikeJwt,
  randomToken,
  repositoryAllowed,
  safeEqual,
  verifyOidc,
} from "./auth.ts";
import { badgeSvg, formatValue, shieldsJson, sparklineSvg } from "./badge.ts";
import {
  baselinePoints,
  Db,
  ingest,
  latestRun,
  listRepositories,
  listRuns,
  type RunRow,
  repoCatalog,
  runDocument,
  runPoints,
  series,
} from "./db.ts";
import { DEFAULT_MAX_UPLOAD_BYTES, type Env } from "./env.ts";
import { ApiError, errorBody } from "./errors.ts";
import { openApiDocument } from "./openapi.ts";

type Vars = { db: Db };
const app = new Hono<{ Bindings: Env; Variables: Vars }>();

app.use("*", async (c, next) => {
  c.set("db", new Db(c.env.DB));
  await next();
  c.res.headers.set("x-tokenbench-rows-read", String(c.get("db").rowsRead));
});
app.use("/api/v1/*", cors({ origin: "*", allowMethods: ["GET", "POST", "DELETE", "OPTIONS"], maxAge: 600 }));
app.use("/badge/*", cors({ origin: "*", allowMethods: ["GET"] }));

app.onError((err, c) => {
  if (err instanceof ApiError) return c.json(errorBody(err.code, err.message, err.details), err.status);
  console.error("unhandled", err);
  return c.json(errorBody("internal", "internal error"), 500);
});
app.notFound((c) =>
  c.json(errorBody("not_found", `no route ${c.req.method} ${new URL(c.req.url).pathname}`), 404),
);

const repoOf = (owner: string, name: string) => `${owner}/${name}`;

async function requireRead(
  c: { env: Env; req: { header(n: string): string | undefined } },
  repo: string | null,
) {
  if (c.env.READ_TOKEN) {
    const t = bearer(c.req.header("authorization"));
    if (t === null || !(await safeEqual(t, c.env.READ_TOKEN))) {
      throw new ApiError(401, "read_token_required", "this service requires a read token");
    }
  }
  if (repo !== null && !repositoryAllowed(c.env, repo))
    throw new ApiError(404, "repository_not_found", `no repository ${repo}`);
}

const intParam = (v: string | undefined, def: number, min: number, max: number, name: string): number => {
  if (v === undefined || v === "") return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ApiError(400, "invalid_query", `${name} must be an integer in [${min}, ${max}]`);
  return n;
};
const numParam = (v: string | undefined, def: number, min: number, max: number, name: string): number => {
  if (v === undefined || v === "") return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new ApiError(400, "invalid_query", `${name} must be a number in [${min}, ${max}]`);
  return n;
};

function runJson(r: RunRow) {
  return {
    id: r.public_id,
    repository: r.repository,
    kind: r.kind,
    branch: r.branch,
    testbed: { name: r.testbed, fingerprint: r.testbed_fingerprint },
    commit_sha: r.commit_sha,
    pr_number: r.pr_number,
    workflow_run_id: r.workflow_run_id,
    run_attempt: r.run_attempt,
    created_at: r.created_at,
    ingested_at: r.ingested_at,
  };
}

app.get("/health", (c) => c.json({ ok: true }));

// ---- dashboard: one HTML shell; the app (public/assets/app.js) renders each page -------------
const SHELL = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>tokenbench</title><link rel="icon" href="/favicon.svg"><link rel="stylesheet" href="/assets/app.css"></head><body><header><a href="/">tokenbench</a></header><main id="app"><p class="muted">loading…</p></main><noscript>The dashboard needs JavaScript (served by this Worker; no CDN). The JSON API is at <a href="/openapi.json">/openapi.json</a>.</noscript><script type="module" src="/assets/app.js"></script></body></html>`;
const shell = (c: { html(s: string): Response }) => c.html(SHELL);
app.get("/", shell);
app.get("/r/:owner/:repo", shell);
app.get("/runs/:id", shell);
app.get("/openapi.json", (c) => c.json(openApiDocument(new URL(c.req.url).origin)));

// ---- ingest ---------------------------------------------------------------------------------
app.post("/api/v1/runs", async (c) => {
  const limit = Number(c.env.MAX_UPLOAD_BYTES ?? DEFAULT_MAX_UPLOAD_BYTES);
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > limit) throw new ApiError(413, "payload_too_large", `upload exceeds ${limit} bytes`);
  const token = bearer(c.req.header("authorization"));
  if (token === null)
    throw new ApiError(401, "unauthenticated", "send Authorization: Bearer <GitHub OIDC token or API token>");
  const text = await c.req.text();
  if (new TextEncoder().encode(text).length > limit)
    throw new ApiError(413, "payload_too_large", `upload exceeds ${limit} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "request body is not valid JSON");
  }
  const parsed = ResultDocumentSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ApiError(
      422,
      "schema_invalid",
      "document does not match schema v1",
      parsed.error.issues.slice(0, 20).map((i) => ({ path: i.path.join("."), message: i.message })),
    );
  }
  const doc: ResultDocument = parsed.data;
  if (!doc.repository)
    throw new ApiError(422, "repository_missing", 'the document must name its "repository": "owner/name"');
  let jti: string | null = null;
  let jtiExp: number | null = null;
  const db = c.get("db");
  if (looksLikeJwt(token)) {
    const claims = await verifyOidc(token, c.env);
    if (claims.repository.toLowerCase() !== doc.repository.toLowerCase()) {
      throw new ApiError(
        403,
        "repository_mismatch",
        `token is for ${claims.repository}, document names ${doc.repository}`,
      );
    }
    if (!repositoryAllowed(c.env, claims.repository)) {
      throw new ApiError(
        403,
        "repository_not_allowed",
        `${claims.repository} is not in this service's allowlist`,
      );
    }
    const seen = await db.first<{ jti: string }>("SELECT jti FROM oidc_jti WHERE jti = ?", claims.jti);
    if (seen) throw new ApiError(401, "token_replayed", "this OIDC token was already used (jti)");
    jti = claims.jti;
    jtiExp = claims.exp;
  } else {
    const hash = await hashToken(token);
    const row = await db.first<{ repository: string }>(
      `SELECT p.name AS repository FROM api_tokens k JOIN repositories p ON p.id = k.repository_id
       WHERE k.token_hash = ? AND k.revoked_at IS NULL`,
      hash,
    );
    if (!row) throw new ApiError(401, "token_invalid", "unknown or revoked API token");
    if (row.repository.toLowerCase() !== doc.repository.toLowerCase()) {
      throw new ApiError(
        403,
        "repository_mismatch",
        `token is for ${row.repository}, document names ${doc.repository}`,
      );
    }
    if (!repositoryAllowed(c.env, row.repository)) {
      throw new ApiError(
        403,
        "repository_not_allowed",
        `${row.repository} is not in this service's allowlist`,
      );
    }
  }
  const res = await ingest(db, doc, { jti, jtiExpiresAt: jtiExp }, new Date().toISOString());
  return c.json(
    {
      run: runJson(res.run),
      created: res.created,
      points: res.points,
      url: `${new URL(c.req.url).origin}/runs/${res.run.public_id}`,
    },
    res.created ? 201 : 200,
  );
});

// ---- admin ----------------------------------------------------------------------------------
async function requireAdmin(c: { env: Env; req: { header(n: string): string | undefined } }) {
  if (!c.env.ADMIN_TOKEN) throw new ApiError(503, "admin_disabled", "ADMIN_TOKEN is not configured");
  const t = bearer(c.req.header("authorization"));
  if (t === null || !(await safeEqual(t, c.env.ADMIN_TOKEN)))
    throw new ApiError(401, "admin_unauthorized", "admin token required");
}

app.post("/api/v1/admin/tokens", async (c) => {
  await requireAdmin(c);
  let body: { repository?: unknown; label?: unknown };
  try {
    body = await c.req.json();
  } catch {
    throw new ApiError(400, "invalid_json", "request body is not valid JSON");
  }
  const repo = typeof body.repository === "string" ? body.repository : "";
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) {
    throw new ApiError(422, "invalid_repository", 'body must be {"repository": "owner/name"}');
  }
  const token = randomToken();
  const now = new Date().toISOString();
  const d1 = c.env.DB;
  const res = await d1.batch([
    d1
      .prepare("INSERT INTO repositories (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING")
      .bind(repo, now),
    d1
      .prepare(
        "INSERT INTO api_tokens (repository_id, token_hash, label, created_at) SELECT id, ?, ?, ? FROM repositories WHERE name = ? RETURNING id",
      )
      .bind(await hashToken(token), typeof body.label === "string" ? body.label : null, now, repo),
  ]);
  const id = (res[1]?.results?.[0] as { id?: number } | undefined)?.id ?? null;
  return c.json({ id, repository: repo, token }, 201);
});

app.get("/api/v1/admin/tokens", async (c) => {
  await requireAdmin(c);
  const repo = c.req.query("repository") ?? null;
  const rows = await c.get("db").all(
    `SELECT k.id, p.name AS repository, k.label, k.created_at, k.revoked_at FROM api_tokens k
     JOIN repositories p ON p.id = k.repository_id WHERE (? IS NULL OR p.name = ?) ORDER BY k.id`,
    repo,
    repo,
  );
  return c.json({ tokens: rows });
});

app.delete("/api/v1/admin/tokens/:id", async (c) => {
  await requireAdmin(c);
  const id = intParam(c.req.param("id"), 0, 1, Number.MAX_SAFE_INTEGER, "id");
  const r = await c.env.DB.prepare("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
    .bind(new Date().toISOString(), id)
    .run();
  if ((r.meta?.changes ?? 0) === 0) throw new ApiError(404, "token_not_found", `no active token ${id}`);
  return c.json({ id, revoked: true });
});

// ---- reads ----------------------------------------------------------------------------------
app.get("/api/v1/repos", async (c) => {
  await requireRead(c, null);
  const rows = (await listRepositories(c.get("db"))).filter((r) => repositoryAllowed(c.env, r.name));
  return c.json({ repositories: rows });
});

app.get("/api/v1/repos/:owner/:repo/catalog", async (c) => {
  const repo = repoOf(c.req.param("owner"), c.req.param("repo"));
  await requireRead(c, repo);
  const rows = await repoCatalog(c.get("db"), repo);
  return c.json({
    repository: repo,
    testbeds: rows.filter((r) => r.kind === "testbed").map((r) => ({ name: r.name, fingerprint: r.extra })),
    benchmarks: rows.filter((r) => r.kind === "benchmark").map((r) => r.name),
    branches: rows.filter((r) => r.kind === "branch").map((r) => r.name),
    measures: [...MEASURE_BY_NAME.values()],
  });
});

function decodeCursor(s: string | undefined): { createdAt: string; id: number } | null {
  if (!s) return null;
  try {
    const [createdAt, id] = JSON.parse(atob(s.replace(/-/g, "+").replace(/_/g, "/"))) as [string, number];
    if (typeof createdAt !== "string" || !Number.isInteger(id)) throw new Error();
    return { createdAt, id };
  } catch {
    throw new ApiError(400, "invalid_cursor", "cursor is not one this service issued");
  }
}
const encodeCursor = (r: RunRow) =>
  btoa(JSON.stringify([r.created_at, r.id]))
    .replace(/\+/g, "-")
    .replace(/\//g, "_");

app.get("/api/v1/repos/:owner/:repo/runs", async (c) => {
  const repo = repoOf(c.req.param("owner"), c.req.param("repo"));
  await requireRead(c, repo);
  const limit = intParam(c.req.query("limit"), 20, 1, 100, "limit");
  const rows = await listRuns(c.get("db"), repo, {
    branch: c.req.query("branch") ?? null,
    testbed: c.req.query("testbed") ?? null,
    sha: c.req.query("sha") ?? null,
    limit,
    cursor: decodeCursor(c.req.query("cursor")),
  });
  return c.json({
    runs: rows.map(runJson),
    next_cursor: rows.length === limit ? encodeCursor(rows[rows.length - 1]!) : null,
  });
});

app.get("/api/v1/runs/:id", async (c) => {
  const db = c.get("db");
  const row = await runDocument(db, c.req.param("id"));
  if (!row) throw new ApiError(404, "run_not_found", `no run ${c.req.param("id")}`);
  await requireRead(c, row.repository);
  return c.json({
    run: runJson(row),
    points: await runPoints(db, row.id),
    document: JSON.parse(row.document_json),
  });
});

app.get("/api/v1/repos/:owner/:repo/series", async (c) => {
  const repo = repoOf(c.req.param("owner"), c.req.param("repo"));
  await requireRead(c, repo);
  const benchmark = c.req.query("benchmark");
  const measure = c.req.query("measure");
  if (!benchmark || !measure) throw new ApiError(400, "invalid_query", "benchmark and measure are required");
  const def = MEASURE_BY_NAME.get(measure);
  if (!def) throw new ApiError(400, "unknown_measure", `unknown measure ${measure}`);
  const points = await series(c.get("db"), repo, {
    benchmark,
    measure,
    testbed: c.req.query("testbed") ?? null,
    branch: c.req.query("branch") ?? null,
    limit: intParam(c.req.query("limit"), 100, 1, 1000, "limit"),
    since: c.req.query("since") ?? null,
  });
  return c.json({ repository: repo, benchmark, measure: def, points: points.reverse() });
});

function thresholdsFrom(q: (k: string) => string | undefined): Thresholds {
  return {
    pct: numParam(q("threshold_pct"), DEFAULT_THRESHOLDS.pct, 0, 1000, "threshold_pct"),
    confidence: numParam(q("confidence"), DEFAULT_THRESHOLDS.confidence, 0.5, 0.9999, "confidence"),
    minPoints: intParam(q("min_points"), DEFAULT_THRESHOLDS.minPoints, 2, 100, "min_points"),
  };
}

app.get("/api/v1/repos/:owner/:repo/compare", async (c) => {
  const repo = repoOf(c.req.param("owner"), c.req.param("repo"));
  await requireRead(c, repo);
  const db = c.get("db");
  const headId = c.req.query("head");
  const head = headId
    ? await runDocument(db, headId)
    : await latestRun(db, repo, null).then((r) => (r ? runDocument(db, r.public_id) : null));
  if (!head || head.repository !== repo)
    throw new ApiError(404, "run_not_found", `no head run ${headId ?? "(latest)"} in ${repo}`);
  const doc = JSON.parse(head.document_json) as ResultDocument;
  const baseBranch = c.req.query("base_branch") ?? doc.git?.base_branch ?? "main";
  const n = intParam(c.req.query("n"), 10, 1, 100, "n");
  const th = thresholdsFrom((k) => c.req.query(k));
  const base = await baselinePoints(
    db,
    {
      id: head.id,
      repository: repo,
      testbedFingerprint: head.testbed_fingerprint,
      createdAt: head.created_at,
    },
    baseBranch,
    n,
  );
  const summary = compareRows(await runPoints(db, head.id), base, th);
  return c.json({
    head: runJson(head),
    base_branch: baseBranch,
    baseline_runs: [...new Set(base.map((b) => b.run_id))],
    thresholds: th,
    counts: summary.counts,
    rows: summary.rows,
  });
});

// ---- badges ---------------------------------------------------------------------------------
async function badgeData(
  c: { env: Env; get(k: "db"): Db; req: { query(k: string): string | undefined } },
  repo: string,
) {
  const db = c.get("db");
  let benchmark = c.req.query("benchmark") ?? null;
  let measure = c.req.query("measure") ?? null;
  const testbed = c.req.query("testbed") ?? null;
  const branch = c.req.query("branch") ?? null;
  if (benchmark === null || measure === null) {
    const latest = await latestRun(db, repo, branch);
    if (latest === null) return null;
    const h = headline(await runPoints(db, latest.id));
    if (h === null) return null;
    benchmark ??= h.benchmark;
    measure ??= h.measure;
  }
  const def = MEASURE_BY_NAME.get(measure);
  if (!def) throw new ApiError(400, "unknown_measure", `unknown measure ${measure}`);
  const pts = await series(db, repo, { benchmark, measure, testbed, branch, limit: 31, since: null });
  if (pts.length === 0)
    return { benchmark, measure: def, points: [] as number[], verdict: "none" as const, latest: null };
  const [latest, ...rest] = pts;
  const v = judge(
    rest.map((p) => p.value),
    latest!.value,
    def.direction,
  ).verdict;
  return {
    benchmark,
    measure: def,
    points: pts.map((p) => p.value).reverse(),
    verdict: v,
    latest: latest!.value,
  };
}

function cached(c: { req: { header(n: string): string | undefined } }, body: string, type: string): Response {
  let h = 0;
  for (let i = 0; i < body.length; i++) h = (Math.imul(h, 31) + body.charCodeAt(i)) | 0;
  const etag = `W/"${(h >>> 0).toString(16)}-${body.length}"`;
  const headers = { "content-type": type, etag, "cache-control": "public, max-age=60" };
  if (c.req.header("if-none-match") === etag) return new Response(null, { status: 304, headers });
  return new Response(body, { status: 200, headers });
}

app.get("/badge/:owner/:file", async (c) => {
  const file = c.req.param("file");
  const m = /^(.+)\.(svg|json)$/.exec(file);
  if (!m) throw new ApiError(404, "not_found", "badge paths end in .svg or .json");
  const repo = repoOf(c.req.param("owner"), m[1]!);
  await requireRead(c, repo);
  const d = await badgeData(c, repo);
  const label = c.req.query("label") ?? (d ? `${d.measure.name}` : "tokenbench");
  const message = d && d.latest !== null ? formatValue(d.latest, d.measure.unit) : "no data";
  const verdict = d?.verdict ?? "none";
  const resp =
    m[2] === "svg"
      ? cached(c, badgeSvg(label, message, verdict), "image/svg+xml; charset=utf-8")
      : cached(c, JSON.stringify(shieldsJson(label, message, verdict)), "application/json");
  return resp;
});

app.get("/badge/:owner/:repo/sparkline.svg", async (c) => {
  const repo = repoOf(c.req.param("owner"), c.req.param("repo"));
  await requireRead(c, repo);
  const d = await badgeData(c, repo);
  return cached(c, sparklineSvg(d?.points ?? []), "image/svg+xml; charset=utf-8");
});

export { app };
export default app;
