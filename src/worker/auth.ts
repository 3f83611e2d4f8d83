/**
 * Upload authentication: a GitHub Actions OIDC token (RS256, verified with jose against the
 * issuer's JWKS), or a repository-scoped API token (stored as a SHA-256 hash only).
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  type errors,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import { sha256Hex } from "../shared/testbed.ts";
import { DEFAULT_AUDIENCE, DEFAULT_ISSUER, type Env } from "./env.ts";
import { ApiError } from "./errors.ts";

export const looksLikeJwt = (t: string): boolean =>
  /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(t);

/** Remote key sets per JWKS URL, per isolate (jose caches keys and refetches on an unknown kid). */
const remoteSets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function keySet(env: Env): JWTVerifyGetKey {
  if (env.OIDC_JWKS) return createLocalJWKSet(JSON.parse(env.OIDC_JWKS) as JSONWebKeySet);
  const url = env.OIDC_JWKS_URL ?? `${env.OIDC_ISSUER ?? DEFAULT_ISSUER}/.well-known/jwks`;
  let set = remoteSets.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { cacheMaxAge: 10 * 60 * 1000, timeoutDuration: 10_000 });
    remoteSets.set(url, set);
  }
  return set;
}

export interface OidcClaims {
  iss: string;
  aud: string | string[];
  exp: number;
  nbf?: number;
  iat: number;
  jti: string;
  repository: string;
  ref?: string;
  sha?: string;
  event_name?: string;
  head_ref?: string;
  base_ref?: string;
  [k: string]: unknown;
}

const LEEWAY_S = 60;

/** jose's verdicts as this service's stable error codes. */
function tokenError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as errors.JOSEError & { claim?: string };
  const msg = e.message ?? String(err);
  switch (e.code) {
    case "ERR_JOSE_ALG_NOT_ALLOWED":
    case "ERR_JOSE_NOT_SUPPORTED":
      return new ApiError(401, "token_alg", `unsupported JWT alg; RS256 only (${msg})`);
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return new ApiError(401, "token_signature", "JWT signature does not verify");
    case "ERR_JWKS_NO_MATCHING_KEY":
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return new ApiError(401, "token_key_unknown", `no issuer key for this token's kid (${msg})`);
    case "ERR_JWKS_TIMEOUT":
      return new ApiError(503, "jwks_unavailable", "could not fetch the issuer's keys (timed out)");
    case "ERR_JWT_EXPIRED":
      return new ApiError(401, "token_expired", "JWT has expired");
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const claim = e.claim ?? "";
      const code =
        claim === "nbf"
          ? "token_not_yet_valid"
          : claim === "iss"
            ? "token_issuer"
            : claim === "aud"
              ? "token_audience"
              : claim === "iat"
                ? "token_iat"
                : claim === "jti"
                  ? "token_jti"
                  : claim === "repository"
                    ? "token_repository"
                    : "token_claims";
      return new ApiError(401, code, `JWT claim ${claim || "?"}: ${msg}`);
    }
    case "ERR_JWS_INVALID":
    case "ERR_JWT_INVALID":
      return new ApiError(401, "token_malformed", `not a valid JWT (${msg})`);
    default:
      if (/fetch|network|Expected 200 OK/i.test(msg))
        return new ApiError(503, "jwks_unavailable", `could not fetch the issuer's keys (${msg})`);
      return new ApiError(401, "token_invalid", `JWT refused (${msg})`);
  }
}

/**
 * Verify a GitHub Actions OIDC token with jose: RS256 only, signature against the issuer's JWKS,
 * `iss`, `aud`, `exp`/`nbf` (60 s leeway), and the claims this service needs. The repository
 * binding and branch rules are checked by the caller.
 */
export async function verifyOidc(
  token: string,
  env: Env,
  nowS = Math.floor(Date.now() / 1000),
): Promise<OidcClaims> {
  let claims: OidcClaims;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== "RS256")
      throw new ApiError(401, "token_alg", `unsupported JWT alg ${JSON.stringify(header.alg)}; RS256 only`);
    const { payload } = await jwtVerify(token, keySet(env), {
      algorithms: ["RS256"],
      issuer: env.OIDC_ISSUER ?? DEFAULT_ISSUER,
      audience: env.OIDC_AUDIENCE ?? DEFAULT_AUDIENCE,
      clockTolerance: LEEWAY_S,
      currentDate: new Date(nowS * 1000),
      requiredClaims: ["exp", "iat", "jti", "repository"],
    });
    claims = payload as OidcClaims;
  } catch (err) {
    throw tokenError(err);
  }
  if (claims.iat - LEEWAY_S > nowS) throw new ApiError(401, "token_iat", "JWT issued in the future");
  if (typeof claims.jti !== "string" || claims.jti === "")
    throw new ApiError(401, "token_jti", "JWT has no jti");
  if (typeof claims.repository !== "string")
    throw new ApiError(401, "token_repository", "JWT has no repository claim");
  return claims;
}

function allowlist(env: Env): string[] {
  return (env.ALLOWED_REPOSITORIES ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

const matches = (patterns: string[], repo: string): boolean => {
  const r = repo.toLowerCase();
  return patterns.some((p) => p === "*" || (p.endsWith("/*") ? r.startsWith(p.slice(0, -1)) : r === p));
};

/** Reads and API-token uploads: `owner/*`, `owner/name` or `*`; an empty list allows every repository. */
export function repositoryAllowed(env: Env, repo: string): boolean {
  const list = allowlist(env);
  return list.length === 0 || matches(list, repo);
}

/**
 * OIDC uploads: any GitHub repository can mint a token with any audience, so they are refused
 * until the service says which repositories it serves (`*` opts in to all of them).
 */
export function oidcRepositoryAllowed(env: Env, repo: string): "allowed" | "unset" | "not_listed" {
  const list = allowlist(env);
  if (list.length === 0) return "unset";
  return matches(list, repo) ? "allowed" : "not_listed";
}

/**
 * Which branch's history an OIDC-authenticated run may write. A push (or schedule, dispatch) run
 * writes the branch of its `ref`; a pull-request run writes its head branch only, and never its
 * base branch; a workflow_run run executes the default branch's workflow (trusted code that
 * publishes another run's results, taking the branch from the event) and may write any branch.
 * Returns the reason for refusal, or null.
 */
export function oidcBranchProblem(claims: OidcClaims, branch: string | null): string | null {
  const event = claims.event_name ?? null;
  if (event === "workflow_run") return null;
  if (event === "pull_request" || event === "pull_request_target") {
    if (branch === null) return null;
    if (claims.base_ref && branch === claims.base_ref)
      return `a ${event} run cannot write its base branch "${branch}"; rename the pull request's head branch if it has the same name`;
    if (branch !== claims.head_ref)
      return `a ${event} run for head branch ${JSON.stringify(claims.head_ref ?? null)} cannot write branch "${branch}"`;
    return null;
  }
  const ref = claims.ref ?? "";
  if (!ref.startsWith("refs/heads/"))
    return branch === null
      ? null
      : `a run on ${JSON.stringify(ref)} (not a branch) cannot write branch "${branch}"`;
  const own = ref.slice("refs/heads/".length);
  if (branch !== null && branch !== own) return `a run on branch "${own}" cannot write branch "${branch}"`;
  return null;
}

export function randomToken(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return `tb_${btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

export const hashToken = (t: string): Promise<string> => sha256Hex(t);

/** Constant-time string comparison (over SHA-256 digests, so lengths do not leak). */
export async function safeEqual(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([sha256Hex(a), sha256Hex(b)]);
  let d = 0;
  for (let i = 0; i < x.length; i++) d |= x.charCodeAt(i) ^ y.charCodeAt(i);
  return d === 0;
}

export function bearer(header: string | undefined): string | null {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  return m ? m[1]!.trim() : null;
}
