import { applyD1Migrations, env } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      DB: D1Database;
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
      ADMIN_TOKEN: string;
      ALLOWED_REPOSITORIES: string;
      OIDC_JWKS?: string;
    }
  }
}

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
