/** Worker bindings and variables (wrangler.toml [vars], secrets, `wrangler dev --var K:V`). */
export interface Env {
  DB: D1Database;
  /** Guards /api/v1/admin/*. Unset: admin endpoints answer 503. */
  ADMIN_TOKEN?: string;
  /** When set, reads need `Authorization: Bearer <READ_TOKEN>`. */
  READ_TOKEN?: string;
  /** Comma-separated `owner/*`, `owner/name` or `*`. Empty or unset: OIDC uploads refused; reads and API tokens unrestricted. */
  ALLOWED_REPOSITORIES?: string;
  OIDC_AUDIENCE?: string;
  OIDC_ISSUER?: string;
  OIDC_JWKS_URL?: string;
  /** Inline JWKS JSON, instead of fetching OIDC_JWKS_URL (tests, air-gapped installs). */
  OIDC_JWKS?: string;
  MAX_UPLOAD_BYTES?: string;
  ASSETS?: Fetcher;
}

export const DEFAULT_ISSUER = "https://token.actions.githubusercontent.com";
export const DEFAULT_AUDIENCE = "tokenbench";
export const DEFAULT_MAX_UPLOAD_BYTES = 5 * 1024 * 1024;
