/**
 * What an upload must mean, beyond its shape: rules the results service applies to every
 * document it stores and the Action applies to an artifact before publishing it. Pure; no I/O.
 */
import type { ResultDocument } from "./v1.ts";

/** GitHub's rules: owner 1–39 letters, digits or inner hyphens; name 1–100 of [A-Za-z0-9._-], not "." or "..". */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * The canonical (lower-case) `owner/name`, or null when `name` cannot be a GitHub repository.
 * GitHub compares repository names case-insensitively, so the service does too.
 */
export function canonicalRepository(name: string): string | null {
  const parts = name.split("/");
  if (parts.length !== 2) return null;
  const [owner, repo] = parts as [string, string];
  if (!OWNER.test(owner) || !NAME.test(repo) || repo === "." || repo === "..") return null;
  return `${owner}/${repo}`.toLowerCase();
}

/** How far a document's `created_at` may lie ahead of the service's clock (clock skew). */
export const MAX_FUTURE_SKEW_MS = 10 * 60 * 1000;

export interface UploadIssue {
  /** Stable error code the service answers with (422). */
  code: "created_at_future" | "repository_missing" | "repository_invalid" | "no_levels" | "profile_missing";
  path: string;
  message: string;
}

/** Reasons a schema-valid document must still not be stored; empty when it may be. */
export function uploadIssues(doc: ResultDocument, nowMs: number): UploadIssue[] {
  const issues: UploadIssue[] = [];
  const t = Date.parse(doc.created_at);
  if (t > nowMs + MAX_FUTURE_SKEW_MS)
    issues.push({
      code: "created_at_future",
      path: "created_at",
      message: `${doc.created_at} is in the future (the service's clock says ${new Date(nowMs).toISOString()})`,
    });
  if (doc.repository == null)
    issues.push({
      code: "repository_missing",
      path: "repository",
      message: 'the document must name its "repository": "owner/name"',
    });
  else if (canonicalRepository(doc.repository) === null)
    issues.push({
      code: "repository_invalid",
      path: "repository",
      message: `${JSON.stringify(doc.repository.slice(0, 120))} is not a GitHub repository name (owner/name)`,
    });
  if (doc.kind === "sweep" && doc.levels.length === 0)
    issues.push({
      code: "no_levels",
      path: "levels",
      message: "a sweep without a measured level has nothing to store",
    });
  if (doc.kind === "profile" && (doc.profile == null || doc.profile === undefined))
    issues.push({
      code: "profile_missing",
      path: "profile",
      message: "a profile document without its profile has nothing to store",
    });
  return issues;
}
