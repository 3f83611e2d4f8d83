/** The Worker's Hono environment, auth middleware and the query-parameter parsers every route uses. */
import type { Context, MiddlewareHandler } from "hono";
import { canonicalRepository } from "../schema/upload.ts";
import type { RunSummary } from "../shared/api-types.ts";
import { bearer, repositoryAllowed, safeEqual } from "./auth.ts";
import type { Db, RunRow } from "./db.ts";
import type { Env } from "./env.ts";
import { ApiError } from "./errors.ts";

export type AppEnv = { Bindings: Env; Variables: { db: Db } };
export type Ctx = Context<AppEnv>;

/** Reads: a READ_TOKEN, when the service has one, is checked before anything else is looked up. */
export const readAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.env.READ_TOKEN) {
    const t = bearer(c.req.header("authorization"));
    if (t === null || !(await safeEqual(t, c.env.READ_TOKEN)))
      throw new ApiError(401, "read_token_required", "this service requires a read token");
  }
  await next();
};

/** Admin routes: ADMIN_TOKEN configured and presented. */
export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.env.ADMIN_TOKEN) throw new ApiError(503, "admin_disabled", "ADMIN_TOKEN is not configured");
  const t = bearer(c.req.header("authorization"));
  if (t === null || !(await safeEqual(t, c.env.ADMIN_TOKEN)))
    throw new ApiError(401, "admin_unauthorized", "admin token required");
  await next();
};

/**
 * The canonical (lower-case) `owner/name` of the route; refused as not found when it is not a
 * GitHub repository name or the allowlist excludes it.
 */
export function routeRepo(c: Ctx): string {
  return knownRepo(c, `${c.req.param("owner")}/${c.req.param("repo")}`);
}

/** `given` as a canonical repository name the service may show, else 404. */
export function knownRepo(c: Ctx, given: string): string {
  const repo = canonicalRepository(given);
  if (repo === null) throw new ApiError(404, "repository_not_found", `no repository ${given.slice(0, 200)}`);
  allowed(c, repo);
  return repo;
}

export function allowed(c: Ctx, repo: string): void {
  if (!repositoryAllowed(c.env, repo))
    throw new ApiError(404, "repository_not_found", `no repository ${repo}`);
}

export function runJson(r: RunRow): RunSummary {
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
    measured_at: r.measured_at,
  };
}
