/** D1 access for credentials: repository API tokens (SHA-256 only) and used OIDC token ids. */
import { hashToken } from "./auth.ts";
import type { Db } from "./db.ts";

/** The repository an active API token belongs to, or null. */
export async function apiTokenRepository(db: Db, token: string): Promise<string | null> {
  const row = await db.first<{ repository: string }>(
    `SELECT p.name AS repository FROM api_tokens k JOIN repositories p ON p.id = k.repository_id
     WHERE k.token_hash = ? AND k.revoked_at IS NULL`,
    await hashToken(token),
  );
  return row?.repository ?? null;
}

export async function jtiSeen(db: Db, jti: string): Promise<boolean> {
  return (await db.first<{ jti: string }>("SELECT jti FROM oidc_jti WHERE jti = ?", jti)) !== null;
}

export async function createApiToken(
  db: Db,
  repo: string,
  token: string,
  label: string | null,
  nowIso: string,
): Promise<number | null> {
  const d1 = db.d1;
  const res = await d1.batch([
    d1
      .prepare("INSERT INTO repositories (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING")
      .bind(repo, nowIso),
    d1
      .prepare(
        "INSERT INTO api_tokens (repository_id, token_hash, label, created_at) SELECT id, ?, ?, ? FROM repositories WHERE name = ? RETURNING id",
      )
      .bind(await hashToken(token), label, nowIso, repo),
  ]);
  return (res[1]?.results?.[0] as { id?: number } | undefined)?.id ?? null;
}

export function listApiTokens(db: Db, repo: string | null) {
  return db.all(
    `SELECT k.id, p.name AS repository, k.label, k.created_at, k.revoked_at FROM api_tokens k
     JOIN repositories p ON p.id = k.repository_id WHERE (? IS NULL OR p.name = ?) ORDER BY k.id`,
    repo,
    repo,
  );
}

/** Revoke an active token; false when there was none with that id. */
export async function revokeApiToken(db: Db, id: number, nowIso: string): Promise<boolean> {
  const r = await db.d1
    .prepare("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
    .bind(nowIso, id)
    .run();
  return (r.meta?.changes ?? 0) > 0;
}
