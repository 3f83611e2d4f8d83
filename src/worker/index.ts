/**
 * tokenbench results service: Hono on Cloudflare Workers with D1. Stores schema-v1 results and
 * serves the query API, trend series, compare (baseline + deltas), badges and the dashboard.
 * Routes live in routes/*.ts, auth in middleware (context.ts), SQL in db.ts and token-store.ts.
 */
import { Hono } from "hono";
import { cors } from "hono/cors";
import resultSchema from "../../schema/result-v1.schema.json";
import { type AppEnv, readAuth } from "./context.ts";
import { Db } from "./db.ts";
import { ApiError, errorBody } from "./errors.ts";
import { openApiDocument } from "./openapi.ts";
import { admin } from "./routes/admin.ts";
import { badgeFailure, badges } from "./routes/badges.ts";
import { compare } from "./routes/compare.ts";
import { ingest } from "./routes/ingest.ts";
import { runs } from "./routes/runs.ts";

const app = new Hono<AppEnv>();

app.use("*", async (c, next) => {
  c.set("db", new Db(c.env.DB));
  await next();
  c.res.headers.set("x-tokenbench-rows-read", String(c.get("db").rowsRead));
});
app.use("/api/v1/*", cors({ origin: "*", allowMethods: ["GET", "POST", "DELETE", "OPTIONS"], maxAge: 600 }));
app.use("/badge/*", cors({ origin: "*", allowMethods: ["GET"] }));

app.onError((err, c) => {
  const path = new URL(c.req.url).pathname;
  if (err instanceof ApiError && path.startsWith("/badge/")) return badgeFailure(path, err);
  if (err instanceof ApiError) return c.json(errorBody(err.code, err.message, err.details), err.status);
  console.error("unhandled", err);
  return c.json(errorBody("internal", "internal error"), 500);
});
app.notFound((c) =>
  c.json(errorBody("not_found", `no route ${c.req.method} ${new URL(c.req.url).pathname}`), 404),
);

app.get("/health", (c) => c.json({ ok: true }));

// ---- dashboard: one HTML shell; the app (public/assets/app.js) renders each page -------------
const SHELL = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>tokenbench</title><link rel="icon" href="/favicon.svg"><link rel="stylesheet" href="/assets/app.css"></head><body><header><a href="/">tokenbench</a></header><main id="app"><p class="muted">loading…</p></main><noscript>The dashboard needs JavaScript (served by this Worker; no CDN). The JSON API is at <a href="/openapi.json">/openapi.json</a>.</noscript><script type="module" src="/assets/app.js"></script></body></html>`;
const shell = (c: { html(s: string): Response | Promise<Response> }) => c.html(SHELL);
app.get("/", shell);
app.get("/r/:owner/:repo", shell);
app.get("/runs/:id", shell);
app.get("/r/:owner/:repo/pull/:pr", shell);
app.get("/openapi.json", (c) => c.json(openApiDocument(new URL(c.req.url).origin)));
// The result schema the OpenAPI document references, served here so the reference resolves.
app.get("/schema/result-v1.schema.json", (c) => c.json(resultSchema));

// Auth, in one place: reads need the READ_TOKEN when one is set (checked before any lookup);
// admin routes need the ADMIN_TOKEN (routes/admin.ts); uploads authenticate themselves.
for (const path of ["/api/v1/repos", "/api/v1/repos/*", "/api/v1/runs/:id", "/badge/*"])
  app.use(path, readAuth);
app.route("/api/v1/runs", ingest);
app.route("/api/v1/admin", admin);
app.route("/api/v1", runs);
app.route("/api/v1", compare);
app.route("/badge", badges);

export { app };
export default app;
