/**
 * POST /api/v1/runs. The order is the defence: the token is checked before a byte of the body is
 * read; the body is read with a running byte count that stops at the limit; its nesting depth is
 * checked before it is parsed; the document must match schema v1 and mean something (uploadIssues);
 * only then is it bound to the token's repository and branch and stored in one batch.
 */
import { Hono } from "hono";
import { canonicalRepository, uploadIssues } from "../../schema/upload.ts";
import { type ResultDocument, ResultDocument as ResultDocumentSchema } from "../../schema/v1.ts";
import type { IngestResponse } from "../../shared/api-types.ts";
import {
  bearer,
  looksLikeJwt,
  type OidcClaims,
  oidcBranchProblem,
  oidcRepositoryAllowed,
  repositoryAllowed,
  verifyOidc,
} from "../auth.ts";
import { type AppEnv, type Ctx, runJson } from "../context.ts";
import { DEFAULT_MAX_UPLOAD_BYTES } from "../env.ts";
import { ApiError } from "../errors.ts";
import { storeRun } from "../store.ts";
import { apiTokenRepository, jtiSeen } from "../token-store.ts";

export const ingest = new Hono<AppEnv>();

/** Deeper JSON than any schema-v1 document needs (it nests about 6 levels; extra_body is the user's). */
export const MAX_JSON_DEPTH = 64;

export interface UploadIdentity {
  /** Canonical (lower-case) `owner/name` the token is for. */
  repository: string;
  /** OIDC claims; null for a repository API token. */
  claims: OidcClaims | null;
}

/** Who the token says the uploader is; nothing about the document yet. */
export async function authenticate(c: Ctx, token: string): Promise<UploadIdentity> {
  if (looksLikeJwt(token)) {
    const claims = await verifyOidc(token, c.env);
    const repository = canonicalRepository(claims.repository);
    if (repository === null)
      throw new ApiError(401, "token_repository", "JWT repository claim is not owner/name");
    const allowed = oidcRepositoryAllowed(c.env, repository);
    if (allowed === "unset")
      throw new ApiError(
        403,
        "allowlist_unset",
        "this service accepts no OIDC uploads until ALLOWED_REPOSITORIES names the repositories it serves (owner/name, owner/*, or * for any); ask its operator, or upload with an API token",
      );
    if (allowed === "not_listed")
      throw new ApiError(403, "repository_not_allowed", `${repository} is not in this service's allowlist`);
    if (await jtiSeen(c.get("db"), claims.jti))
      throw new ApiError(401, "token_replayed", "this OIDC token was already used (jti)");
    return { repository, claims };
  }
  const repository = await apiTokenRepository(c.get("db"), token);
  if (repository === null) throw new ApiError(401, "token_invalid", "unknown or revoked API token");
  if (!repositoryAllowed(c.env, repository))
    throw new ApiError(403, "repository_not_allowed", `${repository} is not in this service's allowlist`);
  return { repository: repository.toLowerCase(), claims: null };
}

/** The document may be stored under this identity: same repository, and a branch the run may write. */
export function bindDocument(who: UploadIdentity, doc: ResultDocument): void {
  const repo = canonicalRepository(doc.repository ?? "");
  if (repo !== who.repository)
    throw new ApiError(
      403,
      "repository_mismatch",
      `token is for ${who.repository}, document names ${doc.repository}`,
    );
  if (who.claims !== null) {
    const problem = oidcBranchProblem(who.claims, doc.git?.branch ?? null);
    if (problem !== null) throw new ApiError(403, "branch_not_allowed", problem);
  }
}

/** The request body as text, read with a running count: stops (413) as soon as it passes `limit`. */
export async function readBodyWithin(req: Request, limit: number): Promise<string> {
  const tooLarge = () =>
    new ApiError(413, "payload_too_large", `upload exceeds ${limit} bytes (MAX_UPLOAD_BYTES)`);
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) throw tooLarge();
  if (req.body === null) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const ch of chunks) {
    all.set(ch, at);
    at += ch.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** Whether JSON text nests arrays/objects deeper than `max` (one pass, no recursion, strings skipped). */
export function jsonTooDeep(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92)
        i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 91 || ch === 123) {
      if (++depth > max) return true;
    } else if (ch === 93 || ch === 125) depth--;
  }
  return false;
}

ingest.post("/", async (c) => {
  const limit = Number(c.env.MAX_UPLOAD_BYTES ?? DEFAULT_MAX_UPLOAD_BYTES);
  const token = bearer(c.req.header("authorization"));
  if (token === null)
    throw new ApiError(401, "unauthenticated", "send Authorization: Bearer <GitHub OIDC token or API token>");
  const who = await authenticate(c, token);
  const text = await readBodyWithin(c.req.raw, limit);
  if (jsonTooDeep(text, MAX_JSON_DEPTH))
    throw new ApiError(422, "too_deep", `the document nests deeper than ${MAX_JSON_DEPTH} levels`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "request body is not valid JSON");
  }
  const parsed = ResultDocumentSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 20)
      .map((i) => ({ path: i.path.join("."), message: i.message }));
    throw new ApiError(
      422,
      "schema_invalid",
      `document does not match schema v1: ${issues[0]?.path || "(root)"}: ${issues[0]?.message}`,
      issues,
    );
  }
  const doc: ResultDocument = parsed.data;
  const issues = uploadIssues(doc, Date.now());
  if (issues.length > 0)
    throw new ApiError(422, issues[0]!.code, `${issues[0]!.path}: ${issues[0]!.message}`, issues);
  bindDocument(who, doc);
  const res = await storeRun(
    c.get("db"),
    { ...doc, repository: who.repository },
    { jti: who.claims?.jti ?? null, jtiExpiresAt: who.claims?.exp ?? null },
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
