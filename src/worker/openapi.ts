/** OpenAPI 3.1 description of the results service, served at /openapi.json. */
import { QUERIES, queryParameters } from "./query-params.ts";

export function openApiDocument(origin: string): Record<string, unknown> {
  const err = { $ref: "#/components/schemas/Error" };
  const path = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });
  const errors = {
    "400": { description: "bad request", content: { "application/json": { schema: err } } },
    "401": { description: "unauthenticated", content: { "application/json": { schema: err } } },
    "403": { description: "forbidden", content: { "application/json": { schema: err } } },
    "404": { description: "not found", content: { "application/json": { schema: err } } },
  };
  const ok = (description: string) => ({
    "200": { description, content: { "application/json": { schema: { type: "object" } } } },
  });
  const doc = {
    openapi: "3.1.0",
    info: {
      title: "tokenbench results service",
      version: "1",
      description:
        'Stores tokenbench schema-v1 results (repository -> branch -> testbed -> benchmark -> measure -> points) and serves runs, trend series, compare (baseline and deltas) and badges. Errors: {"error": {"code", "message", "details"?}}.',
    },
    servers: [{ url: origin }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "GitHub Actions OIDC token, repository API token, admin or read token",
        },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: { code: { type: "string" }, message: { type: "string" }, details: {} },
            },
          },
        },
        // Served by this Worker, so the reference resolves wherever the service runs.
        ResultDocument: { $ref: `${origin}/schema/result-v1.schema.json` },
      },
    },
    paths: {
      "/api/v1/runs": {
        post: {
          summary: "Ingest a schema-v1 document (idempotent: re-sending a run returns the stored run)",
          security: [{ bearer: [] }],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/ResultDocument" } } },
          },
          responses: {
            "201": { description: "stored" },
            "200": { description: "already stored; nothing written" },
            ...errors,
            "409": {
              description:
                "run_conflict: this CI attempt (workflow run id, attempt, kind, testbed, shard) already stored a different document",
              content: { "application/json": { schema: err } },
            },
            "413": { description: "too large", content: { "application/json": { schema: err } } },
            "422": { description: "not schema v1", content: { "application/json": { schema: err } } },
          },
        },
      },
      "/api/v1/repos": { get: { summary: "Repositories", responses: ok("repositories") } },
      "/api/v1/repos/{owner}/{repo}/runs": {
        get: {
          summary: "List runs, newest first (cursor pagination)",
          parameters: [path("owner"), path("repo"), ...queryParameters(QUERIES.runs)],
          responses: { ...ok("runs"), ...errors },
        },
      },
      "/api/v1/repos/{owner}/{repo}/catalog": {
        get: {
          summary: "Testbeds, benchmarks, branches and measures of a repository",
          parameters: [path("owner"), path("repo")],
          responses: ok("catalog"),
        },
      },
      "/api/v1/runs/{id}": {
        get: {
          summary: "One run: metadata, points and its document (per-request records stripped)",
          parameters: [path("id")],
          responses: { ...ok("run"), ...errors },
        },
      },
      "/api/v1/runs/{id}/frontier": {
        get: {
          summary:
            "One run's throughput-interactivity frontier from its stored levels (null under two valid steady levels), and its figures at the run's target speeds per user",
          parameters: [path("id")],
          responses: { ...ok("frontier"), ...errors },
        },
      },
      "/api/v1/runs/{id}/frontier.svg": {
        get: {
          summary:
            "One run's frontier as an SVG image over the base runs its verdict read (the newest grey, older fainter): the pull-request comment's picture; 404 no_frontier under two valid steady levels",
          parameters: [path("id")],
          responses: {
            "200": { description: "the image", content: { "image/svg+xml": { schema: { type: "string" } } } },
            ...errors,
          },
        },
      },
      "/api/v1/repos/{owner}/{repo}/series": {
        get: {
          summary: "Points of one benchmark/measure/testbed/branch over time",
          parameters: [path("owner"), path("repo"), ...queryParameters(QUERIES.series)],
          responses: { ...ok("series"), ...errors },
        },
      },
      "/api/v1/repos/{owner}/{repo}/compare": {
        get: {
          summary: "Head run against the last n runs of the base branch on the same testbed",
          description:
            "The run judged against its base branch by the one verdict engine (as `tokenbench compare` and the PR comment judge it): a row per benchmark and measure with the method its evidence allows (history-t from the base branch's last valid runs, invalid runs, outliers and runs before its last change point left out; where no run has a valid level, its last runs, whose invalid rows are not judged and the gate cannot judge), and the gate: its rows judged one-sided with the false-fail rate per pull request held at `fwer`; a TTFT row carries its `split` (each side's queue, prefill and client parts, from the server's per-request timings) where both sides have them, else a TTFT or E2E row the server's mean phases from its /metrics histograms (`split_source: metrics`); the kept verdict unless the query asks for other rules.",
          parameters: [path("owner"), path("repo"), ...queryParameters(QUERIES.compare)],
          responses: { ...ok("compare"), ...errors },
        },
      },
      "/api/v1/repos/{owner}/{repo}/change-points": {
        get: {
          summary: "Change points of one series (E-divisive means with a Student-t test)",
          description:
            "The series' last `limit` valid runs, oldest first (invalid runs are left out and counted); a change needs min_segment runs on each side and p < p_value after a Bonferroni correction for the candidate splits.",
          parameters: [path("owner"), path("repo"), ...queryParameters(QUERIES.changePoints)],
          responses: { ...ok("change points"), ...errors },
        },
      },
      "/api/v1/admin/tokens": {
        post: {
          summary: "Create a repository API token (shown once)",
          security: [{ bearer: [] }],
          responses: { "201": { description: "token" }, ...errors },
        },
        get: {
          summary: "List tokens (no secrets)",
          security: [{ bearer: [] }],
          parameters: queryParameters(QUERIES.tokens),
          responses: ok("tokens"),
        },
      },
      "/api/v1/admin/tokens/{id}": {
        delete: {
          summary: "Revoke a token",
          security: [{ bearer: [] }],
          parameters: [path("id")],
          responses: ok("revoked"),
        },
      },
      "/badge/{owner}/{repo}.svg": {
        get: {
          summary:
            "SVG badge: latest value, coloured by its verdict; always an image (grey 'no data', 'unknown measure', 'bad since', ...; the error in x-tokenbench-error)",
          parameters: [path("owner"), path("repo"), ...queryParameters(QUERIES.badge)],
          responses: { "200": { description: "image/svg+xml" } },
        },
      },
      "/badge/{owner}/{repo}.json": {
        get: {
          summary: "shields.io endpoint JSON for the same badge",
          parameters: [path("owner"), path("repo"), ...queryParameters(QUERIES.badge)],
          responses: ok("shields endpoint"),
        },
      },
      "/badge/{owner}/{repo}/sparkline.svg": {
        get: {
          summary: "Sparkline of the last 31 points",
          parameters: [path("owner"), path("repo"), ...queryParameters(QUERIES.badge)],
          responses: { "200": { description: "image/svg+xml" } },
        },
      },
      "/openapi.json": { get: { summary: "This document", responses: ok("OpenAPI") } },
    },
  };
  // Every operation gets an operationId from its method and path (getRepoCompare, postRuns, ...).
  for (const [route, ops] of Object.entries(
    doc.paths as Record<string, Record<string, Record<string, unknown>>>,
  ))
    for (const [method, op] of Object.entries(ops)) op.operationId ??= operationId(method, route);
  return doc;
}

function operationId(method: string, route: string): string {
  const words = route
    .replace(/^\/api\/v1/, "")
    .split(/[/{}.\-_]+/)
    .filter((w) => w !== "" && w !== "owner")
    .map((w) => w[0]!.toUpperCase() + w.slice(1));
  return method + words.join("");
}
