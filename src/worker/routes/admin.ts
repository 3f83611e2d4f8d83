/** Admin: repository API tokens (create, list, revoke). */
import { Hono } from "hono";
import { canonicalRepository } from "../../schema/upload.ts";
import { randomToken } from "../auth.ts";
import { type AppEnv, adminAuth } from "../context.ts";
import { ApiError } from "../errors.ts";
import { QUERIES, readQuery } from "../query-params.ts";
import { createApiToken, listApiTokens, revokeApiToken } from "../token-store.ts";
import { readBodyWithin } from "./ingest.ts";

export const admin = new Hono<AppEnv>();
admin.use("*", adminAuth);

admin.post("/tokens", async (c) => {
  let body: unknown;
  try {
    body = JSON.parse(await readBodyWithin(c.req.raw, 64 * 1024));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(400, "invalid_json", "request body is not valid JSON");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new ApiError(
      422,
      "invalid_body",
      'body must be a JSON object: {"repository": "owner/name", "label": "..."}',
    );
  const b = body as { repository?: unknown; label?: unknown };
  const repo = typeof b.repository === "string" ? canonicalRepository(b.repository) : null;
  if (repo === null)
    throw new ApiError(
      422,
      "invalid_repository",
      'body must be {"repository": "owner/name"} with a GitHub repository name',
    );
  if (b.label !== undefined && b.label !== null && (typeof b.label !== "string" || b.label.length > 200))
    throw new ApiError(422, "invalid_label", '"label" must be a string of at most 200 characters');
  const token = randomToken();
  const label = typeof b.label === "string" ? b.label : null;
  const id = await createApiToken(c.get("db"), repo, token, label, new Date().toISOString());
  return c.json({ id, repository: repo, token }, 201);
});

admin.get("/tokens", async (c) => {
  const q = readQuery(c, QUERIES.tokens);
  return c.json({ tokens: await listApiTokens(c.get("db"), q.repository?.toLowerCase() ?? null) });
});

admin.delete("/tokens/:id", async (c) => {
  const raw = c.req.param("id");
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id) || id < 1)
    throw new ApiError(
      400,
      "invalid_token_id",
      `token ids are positive integers (from GET /api/v1/admin/tokens), got ${JSON.stringify(raw.slice(0, 40))}`,
    );
  if (!(await revokeApiToken(c.get("db"), id, new Date().toISOString())))
    throw new ApiError(404, "token_not_found", `no active token ${id}`);
  return c.json({ id, revoked: true });
});
