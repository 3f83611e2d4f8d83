/** Admin: repository API tokens (create, list, revoke). */
import { Hono } from "hono";
import { randomToken } from "../auth.ts";
import { type AppEnv, adminAuth, intParam } from "../context.ts";
import { ApiError } from "../errors.ts";
import { createApiToken, listApiTokens, revokeApiToken } from "../token-store.ts";

export const admin = new Hono<AppEnv>();
admin.use("*", adminAuth);

admin.post("/tokens", async (c) => {
  let body: { repository?: unknown; label?: unknown };
  try {
    body = await c.req.json();
  } catch {
    throw new ApiError(400, "invalid_json", "request body is not valid JSON");
  }
  const repo = typeof body?.repository === "string" ? body.repository : "";
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) {
    throw new ApiError(422, "invalid_repository", 'body must be {"repository": "owner/name"}');
  }
  const token = randomToken();
  const label = typeof body.label === "string" ? body.label : null;
  const id = await createApiToken(c.get("db"), repo, token, label, new Date().toISOString());
  return c.json({ id, repository: repo, token }, 201);
});

admin.get("/tokens", async (c) =>
  c.json({ tokens: await listApiTokens(c.get("db"), c.req.query("repository") ?? null) }),
);

admin.delete("/tokens/:id", async (c) => {
  const id = intParam(c.req.param("id"), 0, 1, Number.MAX_SAFE_INTEGER, "id");
  if (!(await revokeApiToken(c.get("db"), id, new Date().toISOString())))
    throw new ApiError(404, "token_not_found", `no active token ${id}`);
  return c.json({ id, revoked: true });
});
