/** Repositories, their catalog, runs (cursor pagination) and one run with its points. */
import { Hono } from "hono";
import { frontierOf } from "../../shared/frontier.ts";
import { MEASURE_BY_NAME } from "../../shared/measures.ts";
import { repositoryAllowed } from "../auth.ts";
import { type AppEnv, allowed, routeRepo, runJson } from "../context.ts";
import { listRepositories, listRuns, type RunRow, repoCatalog, runDocument, runPoints } from "../db.ts";
import { ApiError } from "../errors.ts";
import { QUERIES, readQuery } from "../query-params.ts";

export const runs = new Hono<AppEnv>();

runs.get("/repos", async (c) => {
  readQuery(c, QUERIES.none);
  const rows = (await listRepositories(c.get("db"))).filter((r) => repositoryAllowed(c.env, r.name));
  return c.json({ repositories: rows });
});

runs.get("/repos/:owner/:repo/catalog", async (c) => {
  const repo = routeRepo(c);
  readQuery(c, QUERIES.none);
  const rows = await repoCatalog(c.get("db"), repo);
  return c.json({
    repository: repo,
    testbeds: rows.filter((r) => r.kind === "testbed").map((r) => ({ name: r.name, fingerprint: r.extra })),
    benchmarks: rows.filter((r) => r.kind === "benchmark").map((r) => r.name),
    branches: rows.filter((r) => r.kind === "branch").map((r) => r.name),
    measures: [...MEASURE_BY_NAME.values()],
  });
});

function decodeCursor(s: string | null): { createdAt: string; id: number } | null {
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

runs.get("/repos/:owner/:repo/runs", async (c) => {
  const repo = routeRepo(c);
  const q = readQuery(c, QUERIES.runs);
  const limit = q.limit;
  const rows = await listRuns(c.get("db"), repo, {
    branch: q.branch,
    testbed: q.testbed,
    sha: q.sha,
    pr: q.pr,
    limit,
    cursor: decodeCursor(q.cursor),
  });
  return c.json({
    runs: rows.map(runJson),
    next_cursor: rows.length === limit ? encodeCursor(rows[rows.length - 1]!) : null,
  });
});

runs.get("/runs/:id", async (c) => {
  const db = c.get("db");
  readQuery(c, QUERIES.none);
  const row = await runDocument(db, c.req.param("id"));
  if (!row) throw new ApiError(404, "run_not_found", `no run ${c.req.param("id")}`);
  allowed(c, row.repository);
  return c.json({
    run: runJson(row),
    points: await runPoints(db, row.id),
    document: JSON.parse(row.document_json),
  });
});

/** A run's throughput-interactivity frontier, derived from its stored levels (so older runs have one too). */
runs.get("/runs/:id/frontier", async (c) => {
  readQuery(c, QUERIES.none);
  const row = await runDocument(c.get("db"), c.req.param("id"));
  if (!row) throw new ApiError(404, "run_not_found", `no run ${c.req.param("id")}`);
  allowed(c, row.repository);
  const doc = JSON.parse(row.document_json);
  return c.json({ run_id: row.public_id, frontier: doc.kind === "sweep" ? frontierOf(doc) : null });
});
