/**
 * Upload authentication: a GitHub Actions OIDC token (RS256, verified against the issuer's JWKS),
 * or a repository-scoped API token (stored as a SHA-256 hash only). Web Crypto only.
 */
import { sha256Hex } from "../shared/testbed.ts";
import { DEFAULT_AUDIENCE, DEFAULT_ISSUER, type Env } from "./env.ts";
import { ApiError } from "./errors.ts";

interface Jwk {
  kid?: string;
  kty: string;
  n?: string;
  e?: string;
  alg?: string;
}

const b64urlDecode = (s: string): Uint8Array => {
  const pad = s.length % 4 === 2 ? "==" : s.length % 4 === 3 ? "=" : "";
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + pad);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
};
const b64urlJson = (s: string): unknown => JSON.parse(new TextDecoder().decode(b64urlDecode(s)));

export const looksLikeJwt = (t: string): boolean =>
  /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(t);

/** JWKS cache per isolate: keys for 10 minutes; an unknown kid forces one refetch. */
const jwksCache = new Map<string, { keys: Jwk[]; at: number }>();
const JWKS_TTL_MS = 10 * 60 * 1000;

export async function loadJwks(
  env: Env,
  forceRefresh = false,
  fetcher: typeof fetch = fetch,
): Promise<Jwk[]> {
  if (env.OIDC_JWKS) {
    const j = JSON.parse(env.OIDC_JWKS) as { keys?: Jwk[] };
    return j.keys ?? [];
  }
  const issuer = env.OIDC_ISSUER ?? DEFAULT_ISSUER;
  const url = env.OIDC_JWKS_URL ?? `${issuer}/.well-known/jwks`;
  const hit = jwksCache.get(url);
  if (hit && !forceRefresh && Date.now() - hit.at < JWKS_TTL_MS) return hit.keys;
  const res = await fetcher(url, { headers: { accept: "application/json" } });
  if (!res.ok)
    throw new ApiError(503, "jwks_unavailable", `could not fetch the issuer's keys (${res.status})`);
  const j = (await res.json()) as { keys?: Jwk[] };
  const keys = j.keys ?? [];
  jwksCache.set(url, { keys, at: Date.now() });
  return keys;
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

/** Verify signature and standard claims; the repository binding is checked by the caller. */
export async function verifyOidc(
  token: string,
  env: Env,
  nowS = Math.floor(Date.now() / 1000),
): Promise<OidcClaims> {
  const parts = token.split(".");
  if (parts.length !== 3) throw new ApiError(401, "token_malformed", "not a JWT");
  let header: { alg?: string; kid?: string; typ?: string };
  let claims: OidcClaims;
  try {
    header = b64urlJson(parts[0]!) as typeof header;
    claims = b64urlJson(parts[1]!) as OidcClaims;
  } catch {
    throw new ApiError(401, "token_malformed", "JWT header or payload is not base64url JSON");
  }
  if (header.alg !== "RS256")
    throw new ApiError(401, "token_alg", `unsupported JWT alg ${JSON.stringify(header.alg)}; RS256 only`);
  if (!parts[2]) throw new ApiError(401, "token_unsigned", "JWT has no signature");
  let keys = await loadJwks(env);
  let jwk = keys.find((k) => k.kid === header.kid && k.kty === "RSA");
  if (!jwk && !env.OIDC_JWKS) {
    keys = await loadJwks(env, true);
    jwk = keys.find((k) => k.kid === header.kid && k.kty === "RSA");
  }
  if (!jwk)
    throw new ApiError(401, "token_key_unknown", `no issuer key with kid ${JSON.stringify(header.kid)}`);
  const key = await crypto.subtle.importKey(
    "jwk",
    { kty: "RSA", n: jwk.n, e: jwk.e, alg: "RS256", ext: true } as JsonWebKey,
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const ok = await crypto.subtle.verify(
    "RSASSA-PKCS1-v1_5",
    key,
    b64urlDecode(parts[2]),
    new TextEncoder().encode(`${parts[0]}.${parts[1]}`),
  );
  if (!ok) throw new ApiError(401, "token_signature", "JWT signature does not verify");
  const issuer = env.OIDC_ISSUER ?? DEFAULT_ISSUER;
  if (claims.iss !== issuer)
    throw new ApiError(401, "token_issuer", `issuer ${JSON.stringify(claims.iss)} is not ${issuer}`);
  const aud = env.OIDC_AUDIENCE ?? DEFAULT_AUDIENCE;
  const auds = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!auds.includes(aud)) throw new ApiError(401, "token_audience", `audience is not ${aud}`);
  if (typeof claims.exp !== "number" || claims.exp + LEEWAY_S < nowS)
    throw new ApiError(401, "token_expired", "JWT has expired");
  if (typeof claims.nbf === "number" && claims.nbf - LEEWAY_S > nowS)
    throw new ApiError(401, "token_not_yet_valid", "JWT is not valid yet");
  if (typeof claims.iat !== "number" || claims.iat - LEEWAY_S > nowS)
    throw new ApiError(401, "token_iat", "JWT issued in the future");
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
