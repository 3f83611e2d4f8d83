/** Repositories, their catalog, runs (cursor pagination) and one run with its points. */
import { Hono } from "hono";
import type { ResultDocument } from "../../schema/v1.ts";
import { frontierOf } from "../../shared/frontier.ts";
import { frontierSvg } from "../../shared/frontier-svg.ts";
import { MEASURE_BY_NAME } from "../../shared/measures.ts";
import { repositoryAllowed } from "../auth.ts";
import { type AppEnv, allowed, routeRepo, runJson } from "../context.ts";
import {
  baseRuns,
  listRepositories,
  listRuns,
  type RunRow,
  repoCatalog,
  runDocument,
  runPoints,
} from "../db.ts";
import { ApiError } from "../errors.ts";
import { judgedAgainst } from "../judge.ts";
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

/** Base runs drawn behind a run's frontier: the newest of those its verdict read, then earlier ones. */
const FRONTIER_BASES = 6;

/**
 * A run's frontier as an SVG image, the base branch's runs behind it: the ones its kept verdict
 * read (newest first), else its base branch's latest on its testbed. For the pull-request comment
 * and the job summary, which can only show an image by its address.
 */
runs.get("/runs/:id/frontier.svg", async (c) => {
  readQuery(c, QUERIES.none);
  const db = c.get("db");
  const row = await runDocument(db, c.req.param("id"));
  if (!row) throw new ApiError(404, "run_not_found", `no run ${c.req.param("id")}`);
  allowed(c, row.repository);
  const doc = JSON.parse(row.document_json) as ResultDocument;
  const head = doc.kind === "sweep" ? frontierOf(doc) : null;
  if (!head)
    throw new ApiError(
      404,
      "no_frontier",
      `run ${row.public_id} has no frontier: it needs two valid, steady sweep levels (a profile or a one-level run has none)`,
    );
  const kept = row.verdict_json
    ? (JSON.parse(row.verdict_json) as { baseline?: string[] }).baseline
    : undefined;
  const docs = kept
    ? (await Promise.all(kept.slice(0, FRONTIER_BASES).map((id) => runDocument(db, id)))).filter(
        (r) => r !== null,
      )
    : await baseRuns(
        db,
        {
          id: row.id,
          repository: row.repository,
          testbedFingerprint: row.testbed_fingerprint,
          before: row.created_at,
        },
        judgedAgainst(doc),
        FRONTIER_BASES,
      );
  const bases = docs.flatMap((r) => {
    const d = JSON.parse(r.document_json) as ResultDocument;
    const f = d.kind === "sweep" ? frontierOf(d) : null;
    const sha = d.git?.sha?.slice(0, 7);
    return f ? [{ label: `base ${d.git?.branch ?? ""}${sha ? ` ${sha}` : ""}`.trim(), frontier: f }] : [];
  });
  const sha = doc.git?.sha?.slice(0, 7);
  const svg = frontierSvg({ label: `this run${sha ? ` ${sha}` : ""}`, frontier: head }, bases);
  return c.body(svg, 200, { "content-type": "image/svg+xml; charset=utf-8", "cache-control": "max-age=300" });
});
