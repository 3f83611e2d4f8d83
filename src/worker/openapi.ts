/** OpenAPI 3.1 description of the results service, served at /openapi.json. */
export function openApiDocument(origin: string): Record<string, unknown> {
  const err = { $ref: "#/components/schemas/Error" };
  /** Numeric parameters are typed as numbers, so clients and validators see what is accepted. */
  const NUMERIC: Record<string, "integer" | "number"> = {
    limit: "integer",
    n: "integer",
    min_points: "integer",
    min_segment: "integer",
    threshold_pct: "number",
    confidence: "number",
    p_value: "number",
  };
  const q = (name: string, description: string, required = false) => ({
    name,
    in: "query",
    required,
    schema: { type: NUMERIC[name] ?? "string" },
    description,
  });
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
          parameters: [
            path("owner"),
            path("repo"),
            q("branch", "branch name"),
            q("testbed", "name or fingerprint"),
            q("sha", "commit sha prefix"),
            q("limit", "1..100"),
            q("cursor", "next_cursor of the previous page"),
          ],
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
      "/api/v1/repos/{owner}/{repo}/series": {
        get: {
          summary: "Points of one benchmark/measure/testbed/branch over time",
          parameters: [
            path("owner"),
            path("repo"),
            q("benchmark", "e.g. closed c=8", true),
            q("measure", "e.g. ttft_p95_ms", true),
            q("testbed", "default: the newest run's testbed"),
            q("branch", "default main"),
            q("limit", "1..1000"),
            q("since", "ISO time"),
          ],
          responses: { ...ok("series"), ...errors },
        },
      },
      "/api/v1/repos/{owner}/{repo}/compare": {
        get: {
          summary: "Head run against the last n runs of the base branch on the same testbed",
          description:
            "Verdict per measure, direction-aware: with >= min_points baseline points, a Student-t prediction interval at `confidence`; with fewer, |delta %| > threshold_pct.",
          parameters: [
            path("owner"),
            path("repo"),
            q("head", "run id (default: newest)"),
            q("base_branch", "default: the document's base branch, else main"),
            q("n", "baseline runs, default 10"),
            q("threshold_pct", "default 5"),
            q("confidence", "default 0.95"),
            q("min_points", "default 5"),
            q("thresholds", 'rules, e.g. "ttft_p95_ms=+10%, output_tok_s=-5%, *=t-test" (default *=t-test)'),
            q("fail_on", "regression | warning | never: what sets `failed` (default warning)"),
          ],
          responses: { ...ok("compare"), ...errors },
        },
      },
      "/api/v1/repos/{owner}/{repo}/change-points": {
        get: {
          summary: "Change points of one series (E-divisive means with a Student-t test)",
          description:
            "The series' last `limit` runs, oldest first; a change needs min_segment runs on each side and p < p_value after a Bonferroni correction for the candidate splits.",
          parameters: [
            path("owner"),
            path("repo"),
            q("benchmark", "required, e.g. closed c=8"),
            q("measure", "required, e.g. output_tok_s"),
            q("testbed", "name or fingerprint (default: the newest run's)"),
            q("branch", "default main"),
            q("limit", "runs searched, 8 to 200, default 100"),
            q("min_segment", "default 3"),
            q("p_value", "default 0.01"),
          ],
          responses: { ...ok("change points"), ...errors },
        },
      },
      "/api/v1/admin/tokens": {
        post: {
          summary: "Create a repository API token (shown once)",
          security: [{ bearer: [] }],
          responses: { "201": { description: "token" }, ...errors },
        },
        get: { summary: "List tokens (no secrets)", security: [{ bearer: [] }], responses: ok("tokens") },
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
          summary: "SVG badge: latest value, coloured by its verdict; grey 'no data'",
          parameters: [
            path("owner"),
            path("repo"),
            q("benchmark", ""),
            q("measure", ""),
            q("testbed", ""),
            q("branch", ""),
          ],
          responses: { "200": { description: "image/svg+xml" } },
        },
      },
      "/badge/{owner}/{repo}.json": {
        get: {
          summary: "shields.io endpoint JSON for the same badge",
          parameters: [path("owner"), path("repo")],
          responses: ok("shields endpoint"),
        },
      },
      "/badge/{owner}/{repo}/sparkline.svg": {
        get: {
          summary: "Sparkline of the last 31 points",
          parameters: [path("owner"), path("repo")],
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
