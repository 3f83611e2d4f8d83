/** POST /api/v1/runs: authenticate, read within the size limit, validate, store in one batch. */
import { Hono } from "hono";
import { type ResultDocument, ResultDocument as ResultDocumentSchema } from "../../schema/v1.ts";
import type { IngestResponse } from "../../shared/api-types.ts";
import { bearer, looksLikeJwt, repositoryAllowed, verifyOidc } from "../auth.ts";
import { type AppEnv, type Ctx, runJson } from "../context.ts";
import { ingest } from "../db.ts";
import { DEFAULT_MAX_UPLOAD_BYTES } from "../env.ts";
import { ApiError } from "../errors.ts";
import { apiTokenRepository, jtiSeen } from "../token-store.ts";

export const ingestRoutes = new Hono<AppEnv>();

export interface UploadIdentity {
  repository: string;
  /** OIDC token id and expiry, stored so the token is used once. */
  jti: string | null;
  jtiExpiresAt: number | null;
}

/** Who may upload for `documentRepo`: an OIDC token or a repository API token. */
export async function authenticateUpload(
  c: Ctx,
  token: string,
  documentRepo: string,
): Promise<UploadIdentity> {
  const db = c.get("db");
  let id: UploadIdentity;
  if (looksLikeJwt(token)) {
    const claims = await verifyOidc(token, c.env);
    id = { repository: claims.repository, jti: claims.jti, jtiExpiresAt: claims.exp };
  } else {
    const repository = await apiTokenRepository(db, token);
    if (repository === null) throw new ApiError(401, "token_invalid", "unknown or revoked API token");
    id = { repository, jti: null, jtiExpiresAt: null };
  }
  if (id.repository.toLowerCase() !== documentRepo.toLowerCase()) {
    throw new ApiError(
      403,
      "repository_mismatch",
      `token is for ${id.repository}, document names ${documentRepo}`,
    );
  }
  if (!repositoryAllowed(c.env, id.repository)) {
    throw new ApiError(403, "repository_not_allowed", `${id.repository} is not in this service's allowlist`);
  }
  if (id.jti !== null && (await jtiSeen(db, id.jti)))
    throw new ApiError(401, "token_replayed", "this OIDC token was already used (jti)");
  return id;
}

ingestRoutes.post("/", async (c) => {
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
  const who = await authenticateUpload(c, token, doc.repository);
  const res = await ingest(
    c.get("db"),
    doc,
    { jti: who.jti, jtiExpiresAt: who.jtiExpiresAt },
    new Date().toISOString(),
  );
  const body: IngestResponse = {
    run: runJson(res.run),
    created: res.created,
    points: res.points,
    url: `${new URL(c.req.url).origin}/runs/${res.run.public_id}`,
  };
  return c.json(body, res.created ? 201 : 200);
});
